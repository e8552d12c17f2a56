"""Every public name of `torch.tpu` and its submodules, in one table (the style of Google TorchTPU's public_api.py).

A row is (name, origin, status):
  origin  "google"   Google TorchTPU's `torch.tpu` has it (read from its torch-tpu 0.2.0 package), so code written
                     for it uses it;
          "cuda"     torch.cuda's name, kept so CUDA code ports by changing the device string;
          "torchtpu" ours only.
  status  HERE       provided and working;
          a LATER_*  reason: the issue that brings it. Top-level names are absent until then; submodule names exist
                     and raise NotImplementedError naming that issue (`later(...)` below), so `from torch.tpu.ops
                     import ragged_dot` works today and the call says when it will.
tests/test_names.py checks the table against the modules both ways.
"""

HERE = "here"
LATER_FUSED = 'issue 6, "The deferred runtime: DeferAndFuse eager mode"'
LATER_COMPILE = 'issue 7, "torch.compile on tpu"'
LATER_DISTRIBUTED = ('the distributed issue (not filed yet: process groups "tpu" / "tpu_dist" and collectives, '
                     'after issue 9, "The PJRT driver")')
LATER_KERNELS = ('the custom-kernel issue (not filed yet: JAX/Pallas kernels as custom calls, on the custom-call '
                 'mechanism of issue 9, "The PJRT driver")')
LATER_TPU_OPS = ('the TPU ops issue (not filed yet: torch.ops.tpu.* such as ragged_dot, optimization_barrier and '
                 'the bounded-dynamism helpers of issue 7, "torch.compile on tpu")')
LATER_OPTIMIZERS = ('the TPU optimizers issue (not filed yet: functional optimizers and SingleTraceTrainer, on '
                    'issue 7, "torch.compile on tpu")')

TORCH_TPU = [
    # eager modes
    ("EagerMode", "google", HERE),
    ("eager_mode", "google", HERE),            # read/write property: the thread's mode / sets the process mode
    ("set_eager_mode", "google", HERE),        # thread-local; a context manager or a plain call
    ("get_eager_mode", "torchtpu", HERE),      # torchtpu's reader (a str); Google has only the property
    # precision
    ("Precision", "google", HERE),             # DEFAULT, HIGH, HIGHEST (Google's) and EXACT (torchtpu's)
    ("precision", "google", HERE),             # thread-local; a context manager or a plain call
    ("allow_excess_precision", "google", HERE),  # read/write property; the host driver rounds every op anyway
    # device
    ("is_available", "google", HERE),
    ("is_initialized", "google", HERE),
    ("init", "cuda", HERE),
    ("device_count", "google", HERE),
    ("current_device", "google", HERE),
    ("set_device", "google", HERE),
    ("device", "google", HERE),
    ("device_of", "google", HERE),
    ("synchronize", "google", HERE),
    ("get_device_name", "google", HERE),
    ("get_device_properties", "google", HERE),
    ("get_amp_supported_dtype", "google", HERE),
    ("is_bf16_supported", "cuda", HERE),
    ("cpu_fallback_mode", "torchtpu", HERE),
    # RNG
    ("manual_seed", "google", HERE),
    ("manual_seed_all", "google", HERE),
    ("seed", "cuda", HERE),
    ("seed_all", "cuda", HERE),
    ("initial_seed", "google", HERE),
    ("get_rng_state", "google", HERE),
    ("set_rng_state", "google", HERE),
    ("get_rng_state_all", "cuda", HERE),
    ("set_rng_state_all", "cuda", HERE),
    ("default_generators", "google", HERE),
    # streams and events
    ("Stream", "google", HERE),
    ("current_stream", "google", HERE),
    ("default_stream", "google", HERE),
    ("stream", "google", HERE),
    ("StreamContext", "cuda", HERE),
    ("Event", "google", HERE),
    ("set_stream", "google", HERE),
    # memory: Google answers torch.accelerator.memory_*; torch.cuda's names answer the same figures
    ("memory_allocated", "cuda", HERE),
    ("max_memory_allocated", "cuda", HERE),
    ("memory_reserved", "cuda", HERE),
    ("max_memory_reserved", "cuda", HERE),
    ("memory_stats", "cuda", HERE),
    ("reset_peak_memory_stats", "cuda", HERE),
    ("empty_cache", "cuda", HERE),
    ("mem_get_info", "cuda", HERE),
    # compile-cache telemetry (private in Google's package, but documented)
    ("_get_cache_stats", "google", HERE),
    ("_clear_cache", "google", HERE),
    ("_set_cache_only", "google", HERE),
    ("_set_allow_cache", "google", HERE),
    ("_set_dump_on_cache_miss", "google", HERE),
    ("_hbm_usage_summary", "google", LATER_COMPILE),
    # submodules
    ("compiler", "google", HERE),
    ("profiler", "google", HERE),
    ("distributed", "google", HERE),
    ("ops", "google", HERE),
    ("pallas", "google", HERE),
    ("optimizers", "google", HERE),
]

SUBMODULES = {
    "compiler": [
        ("custom_compiler_options", "google", HERE),
        ("current_compiler_options", "torchtpu", HERE),
    ],
    "profiler": [
        ("TpuProfilerConfig", "google", HERE),
    ],
    "distributed": [
        ("set_tpu_launch_env", "google", LATER_DISTRIBUTED),
        ("spmd_safe", "google", LATER_DISTRIBUTED),
        ("topology_aware_mesh", "google", LATER_DISTRIBUTED),
    ],
    "ops": [
        ("ragged_dot", "google", LATER_TPU_OPS),
        ("ragged_dot_weight_grad", "google", LATER_TPU_OPS),
        ("optimization_barrier", "google", LATER_TPU_OPS),
        ("max_pool1d", "google", LATER_TPU_OPS),
        ("max_pool2d", "google", LATER_TPU_OPS),
        ("max_pool3d", "google", LATER_TPU_OPS),
        ("all_gather_dim", "google", LATER_DISTRIBUTED),
        ("reduce_scatter_dim", "google", LATER_DISTRIBUTED),
        ("ragged_all_to_all", "google", LATER_DISTRIBUTED),
        ("send", "google", LATER_DISTRIBUTED),
        ("recv", "google", LATER_DISTRIBUTED),
        ("splash_sdpa", "google", LATER_KERNELS),
    ],
    "pallas": [
        ("jax_op", "google", LATER_KERNELS),
        ("get_pallas_mesh", "google", LATER_KERNELS),
    ],
    "optimizers": [
        ("Optimizer", "google", LATER_OPTIMIZERS),
        ("AdamW", "google", LATER_OPTIMIZERS),
        ("Sgd", "google", LATER_OPTIMIZERS),
        ("Muon", "google", LATER_OPTIMIZERS),
        ("SingleTraceTrainer", "google", LATER_OPTIMIZERS),
    ],
}

LATER = (LATER_FUSED, LATER_COMPILE, LATER_DISTRIBUTED, LATER_KERNELS, LATER_TPU_OPS,
         LATER_OPTIMIZERS)


def is_later(status):
    return status in LATER


def later(module, name, reason):
    """A placeholder for a submodule name whose feature comes with `reason`: calling it (or, for a class,
    instantiating it) raises NotImplementedError naming the issue."""
    qualname = f"torch.tpu.{module}.{name}"
    message = f"{qualname} is not implemented yet in torchtpu: it comes with {reason}"

    def _not_yet(*args, **kwargs):
        raise NotImplementedError(message)

    if name[:1].isupper():  # a class: subclassing works, making one raises
        return type(name, (), {"__init__": _not_yet, "__doc__": message, "__module__": f"torch.tpu.{module}"})
    _not_yet.__name__ = name
    _not_yet.__qualname__ = name
    _not_yet.__doc__ = message
    _not_yet.__module__ = f"torch.tpu.{module}"
    return _not_yet


def define_later_names(module, namespace):
    """Adds the placeholders of `module`'s rows that come later to the module's namespace; returns their names."""
    names = []
    for name, _origin, status in SUBMODULES[module]:
        if is_later(status):
            namespace[name] = later(module, name, status)
            names.append(name)
    return names
