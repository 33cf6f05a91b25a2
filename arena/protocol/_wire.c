/* arena.protocol._wire: the protobuf wire encoding of the referee's decision requests, in C, and the
 * reading of the answers to them.
 *
 * An optional accelerator for arena/protocol/codec.py: the same bytes as serde's Python encoders
 * (tests/arena/test_wire.py compares the two on every game), made without the interpreter. The
 * request's encoding was the costliest part of the referee's work per decision after the engine's,
 * and on the server's loop thread, which wakes cold after every round trip, interpreted code
 * costs two to three times what it costs in a warm loop (docs/performance.md).
 *
 * A plan, built by serde from the message's descriptor, is a tuple of fields, each
 * ``(attribute name, kind, key bytes, sub-plan or None)``; ``kind`` is one of the KIND_*
 * values below, serde's _W_* kinds, which its Python encoder follows too. Proto3 rules, as
 * that encoder applies them: a plain scalar is left out when it is zero or empty, an optional
 * one only when None; packed repeated numbers are left out when there are none.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

enum {
    KIND_STRING = 0,          /* string, left out when empty */
    KIND_STRING_OPTIONAL = 1, /* string with presence, left out when None */
    KIND_STRINGS = 2,         /* repeated string */
    KIND_NUMBER = 3,          /* varint (int, bool), left out when 0 */
    KIND_NUMBER_OPTIONAL = 4, /* varint with presence, left out when None */
    KIND_NUMBERS = 5,         /* repeated varint, packed */
    KIND_MESSAGE = 6,         /* nested message, left out when None */
    KIND_MESSAGES = 7,        /* repeated nested message */
};

typedef struct {
    char *data;
    Py_ssize_t len;
    Py_ssize_t cap;
    char small[1024];
} Buf;

static int buf_reserve(Buf *b, Py_ssize_t extra) {
    Py_ssize_t need = b->len + extra;
    if (need <= b->cap) {
        return 0;
    }
    Py_ssize_t cap = b->cap * 2;
    while (cap < need) {
        cap *= 2;
    }
    char *data;
    if (b->data == b->small) {
        data = PyMem_Malloc((size_t)cap);
        if (data != NULL) {
            memcpy(data, b->small, (size_t)b->len);
        }
    } else {
        data = PyMem_Realloc(b->data, (size_t)cap);
    }
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

static int buf_put(Buf *b, const char *src, Py_ssize_t n) {
    if (buf_reserve(b, n) < 0) {
        return -1;
    }
    memcpy(b->data + b->len, src, (size_t)n);
    b->len += n;
    return 0;
}

static void buf_init(Buf *b) {
    b->data = b->small;
    b->len = 0;
    b->cap = (Py_ssize_t)sizeof(b->small);
}

static PyObject *buf_finish(Buf *b, int rc) {
    PyObject *result = rc == 0 ? PyBytes_FromStringAndSize(b->data, b->len) : NULL;
    if (b->data != b->small) {
        PyMem_Free(b->data);
    }
    return result;
}

static int varint_size(uint64_t v) {
    int n = 1;
    while (v > 0x7F) {
        v >>= 7;
        n++;
    }
    return n;
}

static int buf_varint(Buf *b, uint64_t v) {
    if (buf_reserve(b, 10) < 0) {
        return -1;
    }
    char *p = b->data + b->len;
    while (v > 0x7F) {
        *p++ = (char)((v & 0x7F) | 0x80);
        v >>= 7;
    }
    *p++ = (char)v;
    b->len = p - b->data;
    return 0;
}

static int put_key(Buf *b, PyObject *key) {
    return buf_put(b, PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key));
}

/* A number as protobuf writes int32/int64/bool: negatives as 64-bit two's complement. */
static int number_of(PyObject *v, uint64_t *out) {
    unsigned long long n = PyLong_AsUnsignedLongLongMask(v);
    if (n == (unsigned long long)-1 && PyErr_Occurred()) {
        return -1;
    }
    *out = (uint64_t)n;
    return 0;
}

static int put_string(Buf *b, PyObject *key, PyObject *v) {
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(v, &n);
    if (s == NULL) {
        return -1;
    }
    if (put_key(b, key) < 0 || buf_varint(b, (uint64_t)n) < 0) {
        return -1;
    }
    return buf_put(b, s, n);
}

static int encode_message(Buf *b, PyObject *obj, PyObject *plan, int depth);

/* A length-delimited body is written before its length is known: one byte is kept for the
 * length (open_len), and the body moves only when its length takes more (close_len). */
static Py_ssize_t open_len(Buf *b) {
    if (buf_reserve(b, 1) < 0) {
        return -1;
    }
    b->len += 1;
    return b->len - 1;
}

static int close_len(Buf *b, Py_ssize_t at) {
    uint64_t n = (uint64_t)(b->len - at - 1);
    int size = varint_size(n);
    if (size > 1) {
        if (buf_reserve(b, size - 1) < 0) {
            return -1;
        }
        memmove(b->data + at + size, b->data + at + 1, (size_t)n);
        b->len += size - 1;
    }
    char *p = b->data + at;
    while (n > 0x7F) {
        *p++ = (char)((n & 0x7F) | 0x80);
        n >>= 7;
    }
    *p = (char)n;
    return 0;
}

static int put_message(Buf *b, PyObject *key, PyObject *obj, PyObject *plan, int depth) {
    Py_ssize_t at;
    if (put_key(b, key) < 0 || (at = open_len(b)) < 0) {
        return -1;
    }
    if (encode_message(b, obj, plan, depth + 1) < 0) {
        return -1;
    }
    return close_len(b, at);
}

static int encode_field(Buf *b, PyObject *v, long kind, PyObject *key, PyObject *sub, int depth) {
    switch (kind) {
    case KIND_STRING:
    case KIND_STRING_OPTIONAL:
        if (kind == KIND_STRING && PyUnicode_Check(v) && PyUnicode_GET_LENGTH(v) == 0) {
            return 0;
        }
        return put_string(b, key, v);
    case KIND_NUMBER:
    case KIND_NUMBER_OPTIONAL: {
        uint64_t n;
        if (number_of(v, &n) < 0) {
            return -1;
        }
        if (n == 0 && kind == KIND_NUMBER) {
            return 0;
        }
        if (put_key(b, key) < 0) {
            return -1;
        }
        return buf_varint(b, n);
    }
    case KIND_MESSAGE:
        return put_message(b, key, v, sub, depth);
    default:
        break;
    }
    /* The repeated kinds, read from a tuple: the engine's are tuples already (no copy), and a
     * list is copied, so that Python code run meanwhile (an attribute's getter, an __index__)
     * cannot change what is being walked. */
    if (kind != KIND_STRINGS && kind != KIND_MESSAGES && kind != KIND_NUMBERS) {
        PyErr_Format(PyExc_ValueError, "unknown field kind %ld", kind);
        return -1;
    }
    if (PyUnicode_Check(v) || PyBytes_Check(v)) {
        PyErr_SetString(PyExc_TypeError, "a repeated field must be a tuple or list");
        return -1;
    }
    PyObject *seq = PySequence_Tuple(v);
    if (seq == NULL) {
        return -1;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(seq);
    PyObject **items = &PyTuple_GET_ITEM(seq, 0);
    int rc = 0;
    if (kind == KIND_STRINGS) {
        for (Py_ssize_t i = 0; i < count && rc == 0; i++) {
            rc = put_string(b, key, items[i]);
        }
    } else if (kind == KIND_MESSAGES) {
        for (Py_ssize_t i = 0; i < count && rc == 0; i++) {
            rc = put_message(b, key, items[i], sub, depth);
        }
    } else if (count > 0) { /* KIND_NUMBERS: packed, so the length comes first */
        uint64_t total = 0;
        uint64_t *values = PyMem_Malloc(sizeof(uint64_t) * (size_t)count);
        if (values == NULL) {
            Py_DECREF(seq);
            PyErr_NoMemory();
            return -1;
        }
        for (Py_ssize_t i = 0; i < count && rc == 0; i++) {
            rc = number_of(items[i], &values[i]);
            if (rc == 0) {
                total += (uint64_t)varint_size(values[i]);
            }
        }
        if (rc == 0) {
            rc = put_key(b, key) < 0 || buf_varint(b, total) < 0 ? -1 : 0;
        }
        for (Py_ssize_t i = 0; i < count && rc == 0; i++) {
            rc = buf_varint(b, values[i]);
        }
        PyMem_Free(values);
    }
    Py_DECREF(seq);
    return rc;
}

static int encode_message(Buf *b, PyObject *obj, PyObject *plan, int depth) {
    if (depth > 32) {
        PyErr_SetString(PyExc_ValueError, "messages nested more than 32 deep");
        return -1;
    }
    if (!PyTuple_Check(plan)) {
        PyErr_SetString(PyExc_TypeError, "a plan must be a tuple");
        return -1;
    }
    Py_ssize_t fields = PyTuple_GET_SIZE(plan);
    for (Py_ssize_t i = 0; i < fields; i++) {
        PyObject *field = PyTuple_GET_ITEM(plan, i);
        if (!PyTuple_Check(field) || PyTuple_GET_SIZE(field) != 4 ||
            !PyBytes_Check(PyTuple_GET_ITEM(field, 2))) {
            PyErr_SetString(PyExc_TypeError, "a plan field must be (name, kind, key, sub-plan)");
            return -1;
        }
        long kind = PyLong_AsLong(PyTuple_GET_ITEM(field, 1));
        if (kind == -1 && PyErr_Occurred()) {
            return -1;
        }
        PyObject *v = PyObject_GetAttr(obj, PyTuple_GET_ITEM(field, 0));
        if (v == NULL) {
            return -1;
        }
        int rc = 0;
        /* None is "not set" for every kind (a plain field never holds it in practice). */
        if (v != Py_None) {
            rc = encode_field(b, v, kind, PyTuple_GET_ITEM(field, 2), PyTuple_GET_ITEM(field, 3),
                              depth);
        }
        Py_DECREF(v);
        if (rc < 0) {
            return -1;
        }
    }
    return 0;
}

/* Every function here holds the GIL throughout and keeps no state between calls but the keys
 * set_keys stores once. */
PyDoc_STRVAR(encode_doc,
             "encode(obj, plan) -> bytes\n\n"
             "The wire bytes of the message ``obj`` (an engine dataclass) along ``plan``.");

static PyObject *wire_encode(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "encode(obj, plan) takes two arguments");
        return NULL;
    }
    Buf b;
    buf_init(&b);
    return buf_finish(&b, encode_message(&b, args[0], args[1], 0));
}

static int put_bytes(Buf *b, PyObject *v) {
    if (!PyBytes_Check(v)) {
        PyErr_SetString(PyExc_TypeError, "expected bytes");
        return -1;
    }
    return buf_put(b, PyBytes_AS_STRING(v), PyBytes_GET_SIZE(v));
}

/* The DecisionRequest's field keys, from serde (which reads them off the descriptors). */
static PyObject *decision_keys = NULL;
enum { K_DECISION, K_REQUEST_ID, K_SEAT, K_OBSERVATION, K_BANK, K_EVENTS, K_COUNT };

PyDoc_STRVAR(set_keys_doc,
             "set_keys(decision, request_id, seat, observation, bank, events)\n\n"
             "The wire keys of ServerMessage.decision and of the DecisionRequest fields that "
             ":func:`decision` writes.");

static PyObject *wire_set_keys(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != K_COUNT) {
        PyErr_SetString(PyExc_TypeError, "set_keys takes six keys");
        return NULL;
    }
    PyObject *keys = PyTuple_New(K_COUNT);
    if (keys == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < K_COUNT; i++) {
        if (!PyBytes_Check(args[i])) {
            Py_DECREF(keys);
            PyErr_SetString(PyExc_TypeError, "a key must be bytes");
            return NULL;
        }
        Py_INCREF(args[i]);
        PyTuple_SET_ITEM(keys, i, args[i]);
    }
    Py_XSETREF(decision_keys, keys);
    Py_RETURN_NONE;
}

#define KEY(k) PyTuple_GET_ITEM(decision_keys, (k))

PyDoc_STRVAR(decision_doc,
             "decision(request_id, match_id_field, seat, head, obs, plan, game_key, legal, "
             "deadline_field, bank_ms, events) -> bytes\n\n"
             "A ServerMessage carrying a DecisionRequest, as codec.decision_to_bytes writes it: "
             "``head`` is the observation's text and JSON fields (empty for a lean bot), "
             "``obs`` is encoded along ``plan`` under ``game_key``; ``match_id_field``, "
             "``legal`` and ``deadline_field`` are wire bytes already; ``events`` is a sequence "
             "of Event bodies.");

static PyObject *wire_decision(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 11) {
        PyErr_SetString(PyExc_TypeError, "decision takes eleven arguments");
        return NULL;
    }
    if (decision_keys == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "set_keys was not called");
        return NULL;
    }
    uint64_t request_id, seat, bank;
    if (number_of(args[0], &request_id) < 0 || number_of(args[2], &seat) < 0 ||
        number_of(args[9], &bank) < 0) {
        return NULL;
    }
    PyObject *events = PySequence_Tuple(args[10]);
    if (events == NULL) {
        return NULL;
    }
    Buf b;
    buf_init(&b);
    Py_ssize_t outer, obs_at, typed_at;
    int rc = -1;
    if (put_key(&b, KEY(K_DECISION)) < 0 || (outer = open_len(&b)) < 0 ||
        put_key(&b, KEY(K_REQUEST_ID)) < 0 || buf_varint(&b, request_id) < 0 ||
        put_bytes(&b, args[1]) < 0) {
        goto done;
    }
    if (seat != 0 && (put_key(&b, KEY(K_SEAT)) < 0 || buf_varint(&b, seat) < 0)) {
        goto done;
    }
    if (put_key(&b, KEY(K_OBSERVATION)) < 0 || (obs_at = open_len(&b)) < 0 ||
        put_bytes(&b, args[3]) < 0 || put_bytes(&b, args[6]) < 0 ||
        (typed_at = open_len(&b)) < 0 || encode_message(&b, args[4], args[5], 0) < 0 ||
        close_len(&b, typed_at) < 0 || close_len(&b, obs_at) < 0) {
        goto done;
    }
    if (put_bytes(&b, args[7]) < 0 || put_bytes(&b, args[8]) < 0) {
        goto done;
    }
    if (bank != 0 && (put_key(&b, KEY(K_BANK)) < 0 || buf_varint(&b, bank) < 0)) {
        goto done;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(events);
    PyObject **items = &PyTuple_GET_ITEM(events, 0);
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *e = items[i];
        if (!PyBytes_Check(e)) {
            PyErr_SetString(PyExc_TypeError, "an event body must be bytes");
            goto done;
        }
        if (put_key(&b, KEY(K_EVENTS)) < 0 || buf_varint(&b, (uint64_t)PyBytes_GET_SIZE(e)) < 0 ||
            put_bytes(&b, e) < 0) {
            goto done;
        }
    }
    rc = close_len(&b, outer);
done:
    Py_DECREF(events);
    return buf_finish(&b, rc);
}

/* Reads a varint at *p (before end); 0 on success. At most ten bytes, as protobuf allows. */
static int read_varint(const unsigned char **p, const unsigned char *end, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 70 && *p < end; shift += 7) {
        unsigned char byte = *(*p)++;
        v |= (uint64_t)(byte & 0x7F) << shift;
        if (!(byte & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

PyDoc_STRVAR(answer_doc,
             "answer(data) -> (request_id, index) | None\n\n"
             "A BotMessage's wire bytes read as the usual answer, an Action with an index and "
             "nothing else: ``(request_id, index)``. ``None`` for anything else, which the "
             "caller parses with protobuf.");

static PyObject *wire_answer(PyObject *self, PyObject *data) {
    (void)self;
    if (!PyBytes_Check(data)) {
        PyErr_SetString(PyExc_TypeError, "answer() takes bytes");
        return NULL;
    }
    const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(data);
    const unsigned char *end = p + PyBytes_GET_SIZE(data);
    uint64_t length, request_id = 0, index;
    /* BotMessage.action (field 2, length-delimited), spanning the whole message. */
    if (p == end || *p++ != 0x12 || read_varint(&p, end, &length) < 0 ||
        length != (uint64_t)(end - p)) {
        Py_RETURN_NONE;
    }
    /* Action: request_id (field 1) when not 0, then index (field 2), nothing else. */
    if (p < end && *p == 0x08) {
        p++;
        if (read_varint(&p, end, &request_id) < 0) {
            Py_RETURN_NONE;
        }
    }
    if (p == end || *p++ != 0x10 || read_varint(&p, end, &index) < 0 || p != end ||
        index > 0xFFFFFFFFu) {
        Py_RETURN_NONE;
    }
    return Py_BuildValue("(KK)", (unsigned long long)request_id, (unsigned long long)index);
}

static PyMethodDef wire_methods[] = {
    {"answer", (PyCFunction)wire_answer, METH_O, answer_doc},
    {"encode", (PyCFunction)(void (*)(void))wire_encode, METH_FASTCALL, encode_doc},
    {"set_keys", (PyCFunction)(void (*)(void))wire_set_keys, METH_FASTCALL, set_keys_doc},
    {"decision", (PyCFunction)(void (*)(void))wire_decision, METH_FASTCALL, decision_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef wire_module = {
    PyModuleDef_HEAD_INIT,
    "arena.protocol._wire",
    "Protobuf wire encoding of observations, in C (an accelerator for arena.protocol.codec).",
    -1,
    wire_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__wire(void) { return PyModule_Create(&wire_module); }
