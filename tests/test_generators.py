"""torch.Generator("tpu") and generator= on every random op: same seed, same numbers; a private generator never
moves the default one; get_state/set_state round-trip with torch.tpu.get_rng_state's 16-byte layout."""
import pytest
import torch

D = "tpu"


def _f(*shape):
    return torch.empty(*shape, device=D)


# Every random op that takes generator= (factories, in-place fillers, functional forms, and ops that run on the
# CPU through the fallback such as multinomial and poisson). Each takes the generator (or None) and returns a tensor.
OPS = {
    "rand": lambda g: torch.rand(64, device=D, generator=g),
    "rand_f64": lambda g: torch.rand(64, device=D, dtype=torch.float64, generator=g),
    "randn": lambda g: torch.randn(8, 8, device=D, generator=g),
    "randint": lambda g: torch.randint(0, 1000, (64,), device=D, generator=g),
    "randint_high": lambda g: torch.randint(1000, (64,), device=D, generator=g),
    "randperm": lambda g: torch.randperm(50, device=D, generator=g),
    "rand_like": lambda g: torch.rand_like(_f(64), generator=g),
    "randn_like": lambda g: torch.randn_like(_f(64), generator=g),
    "randint_like": lambda g: torch.randint_like(_f(64), 1000, generator=g),
    "normal_": lambda g: _f(64).normal_(1.0, 2.0, generator=g),
    "normal_tensors": lambda g: torch.normal(torch.zeros(64, device=D), torch.ones(64, device=D), generator=g),
    "normal_float_tensor": lambda g: torch.normal(0.5, torch.ones(64, device=D), generator=g),
    "normal_floats": lambda g: torch.normal(0.0, 1.0, (64,), device=D, generator=g),
    "uniform_": lambda g: _f(64).uniform_(-2, 3, generator=g),
    "bernoulli": lambda g: torch.bernoulli(torch.full((256,), 0.5, device=D), generator=g),
    "bernoulli_p": lambda g: torch.bernoulli(_f(256), 0.3, generator=g),
    "bernoulli_scalar_": lambda g: _f(256).bernoulli_(0.3, generator=g),
    "bernoulli_tensor_": lambda g: _f(256).bernoulli_(torch.full((256,), 0.7, device=D), generator=g),
    "exponential_": lambda g: _f(64).exponential_(2.0, generator=g),
    "geometric_": lambda g: _f(64).geometric_(0.3, generator=g),
    "cauchy_": lambda g: _f(64).cauchy_(generator=g),
    "log_normal_": lambda g: _f(64).log_normal_(generator=g),
    "random_": lambda g: _f(64).random_(generator=g),
    "random_to": lambda g: _f(64).random_(100, generator=g),
    "random_from_to": lambda g: _f(64).random_(-50, 50, generator=g),
    "multinomial": lambda g: torch.multinomial(torch.linspace(0.1, 1, 150, device=D).reshape(5, 30), 10, generator=g),
    "multinomial_replacement": lambda g: torch.multinomial(torch.ones(30, device=D), 200, True, generator=g),
    "poisson": lambda g: torch.poisson(torch.full((64,), 4.0, device=D), generator=g),
}


def _state():
    return torch.tpu.get_rng_state().clone()


@pytest.mark.parametrize("name", sorted(OPS))
def test_a_seeded_private_generator_repeats_its_numbers(name):
    op = OPS[name]
    g = torch.Generator(device=D)
    g.manual_seed(1234)
    a = op(g).cpu()
    b = op(g).cpu()
    g.manual_seed(1234)
    a2 = op(g).cpu()
    b2 = op(g).cpu()
    assert torch.equal(a, a2) and torch.equal(b, b2)
    assert not torch.equal(a, b), "two draws from one generator gave the same numbers"
    g.manual_seed(99)
    assert not torch.equal(op(g).cpu(), a), "a different seed gave the same numbers"


@pytest.mark.parametrize("name", sorted(OPS))
def test_a_private_generator_never_moves_the_default_one(name):
    op = OPS[name]
    torch.tpu.manual_seed(5)
    want = op(None).cpu()
    torch.tpu.manual_seed(5)
    before = _state()
    cpu_before = torch.get_rng_state()
    g = torch.Generator(device=D).manual_seed(5)
    op(g).cpu()
    assert torch.equal(_state(), before)
    assert torch.equal(torch.get_rng_state(), cpu_before), "the CPU default generator moved"
    assert torch.equal(op(None).cpu(), want)  # generator=None still draws from the default one


@pytest.mark.parametrize("name", sorted(OPS))
def test_generator_none_draws_from_the_default_generator(name):
    op = OPS[name]
    torch.tpu.manual_seed(11)
    fresh = _state()
    a = op(None).cpu()
    assert not torch.equal(_state(), fresh), "the default generator did not advance"
    torch.tpu.manual_seed(11)
    assert torch.equal(op(None).cpu(), a)


def test_get_state_and_set_state_round_trip_on_a_private_generator():
    g = torch.Generator(device=D).manual_seed(7)
    torch.rand(10, device=D, generator=g)
    s = g.get_state()
    assert s.dtype == torch.uint8 and s.device.type == "cpu" and s.numel() == 16
    a = torch.randn(100, device=D, generator=g).cpu()
    g.set_state(s)
    assert torch.equal(torch.randn(100, device=D, generator=g).cpu(), a)


def test_private_and_default_states_share_one_layout():
    g = torch.Generator(device=D).manual_seed(7)
    assert g.get_state().tolist() == list((7).to_bytes(8, "little") + (0).to_bytes(8, "little"))
    torch.rand(13, device=D, generator=g)
    torch.tpu.set_rng_state(g.get_state())  # the default generator takes a private generator's state
    assert torch.equal(torch.tpu.get_rng_state(), g.get_state())
    assert torch.equal(torch.rand(40, device=D).cpu(), torch.rand(40, device=D, generator=g).cpu())
    h = torch.Generator(device=D)
    h.set_state(torch.tpu.get_rng_state())  # and back
    assert torch.equal(torch.rand(40, device=D).cpu(), torch.rand(40, device=D, generator=h).cpu())


def test_set_state_rejects_a_state_of_the_wrong_size_or_type():
    g = torch.Generator(device=D)
    with pytest.raises(RuntimeError, match="wrong size"):
        g.set_state(torch.zeros(5, dtype=torch.uint8))
    with pytest.raises((RuntimeError, TypeError)):
        g.set_state(torch.zeros(16, dtype=torch.float32))


def test_seed_initial_seed_and_manual_seed():
    g = torch.Generator(device=D)
    assert g.device == torch.device("tpu", 0)
    assert g.initial_seed() == 67280421310721
    assert g.manual_seed(42) is g and g.initial_seed() == 42
    s = g.seed()
    assert g.initial_seed() == s
    g.manual_seed(-1)  # PyTorch wraps negative seeds
    assert g.initial_seed() == 2**64 - 1


def test_clone_state_and_graphsafe_state_are_independent_copies():
    g = torch.Generator(device=D).manual_seed(3)
    torch.rand(5, device=D, generator=g)
    c = g.clone_state()
    assert torch.equal(c.get_state(), g.get_state())
    a = torch.rand(20, device=D, generator=g).cpu()
    assert torch.equal(torch.rand(20, device=D, generator=c).cpu(), a)
    snap = g.graphsafe_get_state()
    b = torch.rand(20, device=D, generator=g).cpu()
    g.graphsafe_set_state(snap)
    assert torch.equal(torch.rand(20, device=D, generator=g).cpu(), b)


def test_a_cpu_generator_on_a_tpu_op_raises_like_cuda():
    with pytest.raises(RuntimeError, match="Expected a 'tpu' device type for generator but found 'cpu'"):
        torch.rand(3, device=D, generator=torch.Generator())
    with pytest.raises(RuntimeError, match="Expected a 'tpu' device type for generator but found 'cpu'"):
        torch.multinomial(torch.ones(4, device=D), 2, generator=torch.Generator())


def test_a_tpu_generator_on_a_cpu_op_raises():
    # The generator's dispatch key sends the op to the tpu kernel, which refuses the CPU tensor (as CUDA's does).
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator|same device"):
        torch.rand(3, generator=torch.Generator(device=D))


def test_torch_manual_seed_seeds_the_tpu_and_tpu_manual_seed_too():
    torch.manual_seed(0)
    a = torch.randn(50, device=D).cpu()
    torch.manual_seed(0)
    assert torch.equal(torch.randn(50, device=D).cpu(), a)
    torch.tpu.manual_seed(0)
    assert torch.equal(torch.randn(50, device=D).cpu(), a)
    assert torch.tpu.initial_seed() == 0


def test_fork_rng_restores_the_tpu_default_generator():
    torch.tpu.manual_seed(8)
    before = _state()
    with torch.random.fork_rng(device_type="tpu"):
        torch.rand(100, device=D)
        torch.tpu.manual_seed(1)
        torch.rand(100, device=D)
    assert torch.equal(_state(), before)


def test_dropout_follows_the_default_seed():
    x = torch.ones(1000, device=D)
    torch.tpu.manual_seed(3)
    a = torch.nn.functional.dropout(x, 0.5).cpu()
    torch.tpu.manual_seed(3)
    b = torch.nn.functional.dropout(x, 0.5).cpu()
    assert torch.equal(a, b)
    assert 300 < int((a == 0).sum()) < 700


def test_two_private_generators_with_one_seed_agree_and_do_not_share_state():
    g1 = torch.Generator(device=D).manual_seed(21)
    g2 = torch.Generator(device=D).manual_seed(21)
    a = torch.rand(30, device=D, generator=g1).cpu()
    torch.rand(30, device=D, generator=g1)
    assert torch.equal(torch.rand(30, device=D, generator=g2).cpu(), a)
