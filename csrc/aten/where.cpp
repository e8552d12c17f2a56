// where.cpp — the user's line (file:line of the innermost Python frame outside torch and torchtpu), cheap enough
// to note on every op: a deferred op's error names it, and TORCHTPU_LOG=fusion prints it with each cut.
//
// On CPython 3.11 the calling thread's own frame stack is read directly, without the GIL: torch's bindings
// release the GIL around every op, taking it back cost more than the op's whole launch, and only this thread
// changes its frames while it is inside the op. Other versions take the GIL and use the public frame API.
// A thread with no Python state of its own (autograd's workers) has no user frame and is skipped.
#include <Python.h>

#include <cstdio>
#include <cstring>

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
#define TORCHTPU_FRAME_FAST 1
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE
#endif

namespace torchtpu {

// Frames of torch and torchtpu are skipped: the user's line is the one that called into them. So is the code
// torch.fx generates for a graph (a torch.compile'd function's ops then name the line that called it).
static bool ours(const char* file) {
    return !file || std::strstr(file, "/torch/") || std::strstr(file, "/torchtpu/") ||
           std::strncmp(file, "<eval_with_key>", 15) == 0;
}

#ifdef TORCHTPU_FRAME_FAST
// co_filename's bytes without allocating: only compact ASCII strings have them in place.
static const char* ascii_of(PyObject* s) {
    if (!s || !PyUnicode_Check(s) || !PyUnicode_IS_COMPACT_ASCII(s)) return nullptr;
    return (const char*)PyUnicode_DATA(s);
}

// The last few lines formatted, per thread: a loop records the same few lines over and over, and the line
// table lookup and formatting cost more than the rest. Keyed by the frame's code object and instruction
// (checked with the code's file and first line, so a code object freed and replaced at the same address is
// not mistaken for the old one).
struct WhereMemo {
    const void* code = nullptr;
    const void* instr = nullptr;
    const void* file = nullptr;
    int first_line = 0;
    bool skip = false;  // a frame of torch or torchtpu
    size_t len = 0;
    char text[192];
};
static thread_local WhereMemo memo[16];

static const char* where_fast(PyThreadState* ts, char* buf, size_t size) {
    for (_PyInterpreterFrame* f = ts->cframe ? ts->cframe->current_frame : nullptr; f; f = f->previous) {
        if (_PyFrame_IsIncomplete(f)) continue;
        PyCodeObject* code = f->f_code;
        WhereMemo& m = memo[(reinterpret_cast<uintptr_t>(f->prev_instr) >> 1) & 15];
        if (m.code != code || m.instr != f->prev_instr || m.file != code->co_filename ||
            m.first_line != code->co_firstlineno) {
            const char* file = ascii_of(code->co_filename);
            m.code = code, m.instr = f->prev_instr, m.file = code->co_filename, m.first_line = code->co_firstlineno;
            m.skip = ours(file);
            if (!m.skip) {
                int line = PyCode_Addr2Line(code, _PyInterpreterFrame_LASTI(f) * (int)sizeof(_Py_CODEUNIT));
                int n = std::snprintf(m.text, sizeof m.text, "%s:%d", file, line);
                m.len = n < 0 ? 0 : (size_t)n < sizeof m.text ? (size_t)n : sizeof m.text - 1;
            }
        }
        if (m.skip) continue;
        size_t len = m.len < size ? m.len : size - 1;
        std::memcpy(buf, m.text, len);
        buf[len] = 0;
        return buf;
    }
    return nullptr;
}
#endif

const char* python_where(char* buf, size_t size) {
    buf[0] = 0;
#if PY_VERSION_HEX >= 0x030D0000
    if (!Py_IsInitialized() || Py_IsFinalizing()) return nullptr;
#else
    if (!Py_IsInitialized() || _Py_IsFinalizing()) return nullptr;
#endif
    PyThreadState* ts = PyGILState_GetThisThreadState();
    if (!ts) return nullptr;
#ifdef TORCHTPU_FRAME_FAST
    return where_fast(ts, buf, size);
#else
    PyGILState_STATE g = PyGILState_Ensure();
    PyFrameObject* f = PyEval_GetFrame();
    Py_XINCREF(f);
    while (f) {
        PyCodeObject* code = PyFrame_GetCode(f);
        const char* file = PyUnicode_AsUTF8(code->co_filename);
        bool skip = ours(file);
        if (!skip) std::snprintf(buf, size, "%s:%d", file, PyFrame_GetLineNumber(f));
        Py_DECREF(code);
        if (!skip) break;
        PyFrameObject* back = PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
    }
    Py_XDECREF(f);
    PyGILState_Release(g);
    return buf[0] ? buf : nullptr;
#endif
}

}  // namespace torchtpu
