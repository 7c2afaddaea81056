/* protocol._records_check: the leader's per-record walk of a produced v2 batch, compiled.

   records_valid(body, count, start) -> bool answers whether protocol.records.check_records would accept the records
   of ``body`` from ``start`` on (LogValidator reading every record of an uncompressed batch, DefaultRecord.readFrom's
   framing): True only where the Python walk accepts. False sends the caller to the Python walk, which raises
   Kafka's error with its message, so this file never has to word one. Every read is bounded by the body's length, as
   the Python walk's indexing is; varints are Kafka's (ByteUtils: an unsigned varint of at most 5 bytes, a varlong
   of at most 10), their values kept in 64 bits where Python's are unbounded, which a 5-byte varint never exceeds.
   tests/protocol/test_record_check_native.py holds this equal to the Python walk on generated and corrupted
   batches. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* ByteUtils.readUnsignedVarint: 0 when truncated or longer than 5 bytes */
static inline int read_uvarint(const uint8_t *b, Py_ssize_t n, Py_ssize_t *pos, uint64_t *out) {
    Py_ssize_t p = *pos;
    uint64_t value = 0;
    int shift = 0;
    for (;;) {
        if (p >= n) return 0;
        uint8_t c = b[p++];
        value |= (uint64_t)(c & 0x7F) << shift;
        if (c < 0x80) break;
        shift += 7;
        if (shift > 28) return 0;
    }
    *pos = p;
    *out = value;
    return 1;
}

/* ByteUtils.readVarlong, its value unused (a timestamp delta): 0 when truncated or longer than 10 bytes */
static inline int skip_varlong(const uint8_t *b, Py_ssize_t n, Py_ssize_t *pos) {
    Py_ssize_t p = *pos;
    int shift = 0;
    for (;;) {
        if (p >= n) return 0;
        uint8_t c = b[p++];
        if (c < 0x80) break;
        shift += 7;
        if (shift > 63) return 0;
    }
    *pos = p;
    return 1;
}

static inline int64_t zigzag(uint64_t raw) { return (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1); }

/* a key or a value: its zig-zag length, then that many bytes unless it is negative (null) */
static inline int skip_bytes(const uint8_t *b, Py_ssize_t n, Py_ssize_t *pos) {
    uint64_t raw;
    if (!read_uvarint(b, n, pos, &raw)) return 0;
    if (!(raw & 1)) {
        uint64_t len = raw >> 1;
        if (len > (uint64_t)(n - *pos)) return 0;
        *pos += (Py_ssize_t)len;
    }
    return 1;
}

/* protocol.records._check_headers: a non-negative count, each header a non-null UTF-8 key and a value */
static int check_headers(const uint8_t *b, Py_ssize_t n, Py_ssize_t *pos) {
    uint64_t raw;
    if (!read_uvarint(b, n, pos, &raw)) return 0;
    int64_t count = zigzag(raw);
    if (count < 0) return 0;
    for (int64_t h = 0; h < count; h++) {
        if (!read_uvarint(b, n, pos, &raw)) return 0;
        int64_t len = zigzag(raw);
        if (len < 0 || len > n - *pos) return 0;
        const uint8_t *key = b + *pos;
        int ascii = 1;
        for (int64_t i = 0; i < len; i++) {
            if (key[i] >= 0x80) {
                ascii = 0;
                break;
            }
        }
        if (!ascii) {  /* bytes.decode()'s own strict UTF-8, so that both walks accept the same keys */
            PyObject *s = PyUnicode_DecodeUTF8((const char *)key, (Py_ssize_t)len, "strict");
            if (s == NULL) {
                PyErr_Clear();
                return 0;
            }
            Py_DECREF(s);
        }
        *pos += (Py_ssize_t)len;
        if (!skip_bytes(b, n, pos)) return 0;
    }
    return 1;
}

static int walk(const uint8_t *b, Py_ssize_t n, Py_ssize_t count, Py_ssize_t pos) {
    for (Py_ssize_t i = 0; i < count; i++) {
        uint64_t raw;
        if (!read_uvarint(b, n, &pos, &raw)) return 0;
        int64_t length = zigzag(raw);
        if (length < 0 || length > n - pos) return 0;
        Py_ssize_t end = pos + (Py_ssize_t)length;
        Py_ssize_t p = pos + 1;  /* past the attributes byte */
        if (!skip_varlong(b, n, &p)) return 0;        /* timestamp delta */
        if (!read_uvarint(b, n, &p, &raw)) return 0;  /* offset delta */
        if (!skip_bytes(b, n, &p)) return 0;          /* key */
        if (!skip_bytes(b, n, &p)) return 0;          /* value */
        if (p >= n) return 0;
        if (b[p]) {
            if (!check_headers(b, n, &p)) return 0;
        } else {
            p += 1;
        }
        if (p != end) return 0;
        pos = end;
    }
    return pos == n;
}

static PyObject *records_valid(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "records_valid(body, count, start)");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    Py_ssize_t count = PyLong_AsSsize_t(args[1]);
    Py_ssize_t start = PyLong_AsSsize_t(args[2]);
    if ((count == -1 || start == -1) && PyErr_Occurred()) {
        PyBuffer_Release(&view);
        return NULL;
    }
    int ok = start >= 0 && start <= view.len && walk((const uint8_t *)view.buf, view.len, count, start);
    PyBuffer_Release(&view);
    if (PyErr_Occurred()) return NULL;
    return PyBool_FromLong(ok);
}

static PyMethodDef methods[] = {
    {"records_valid", (PyCFunction)(void (*)(void))records_valid, METH_FASTCALL,
     "records_valid(body, count, start) -> bool: whether check_records accepts these records (False: ask it why)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_records_check", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__records_check(void) { return PyModule_Create(&module); }
