/* The graph's hottest loops in C: building a node (the intern table), the schedule cache's walk
 * and toposort. lazyarr.compiler.native builds this file with the CPU device's C compiler on first
 * use; the Python versions (uop._PyNode, schedule._walk, uop._py_toposort) are the reference and
 * the fallback, and the tests check that both give the same results.
 *
 * Node: the base of uop.UOp. Building (op, dtype, src, arg) returns the live node of that key if
 * there is one. The table (open addressing, linear probing) holds the nodes' addresses by the hash
 * of their key (op and dtype by identity, the sources by identity, the arg by its key: uop._arg_key's
 * equality, a float by its bits) and no reference: a node leaves the table when it is freed (or
 * cleared by the cycle collector) before anything else happens to it (its weak references'
 * callbacks run after), and a lookup passes over a node whose freeing is deferred. (A dict of key
 * tuples cost three allocations and four lookups a node: a loop builds thousands.)
 *
 * walk(sink, realized_for, names): the key (as bytes), input buffers, order, resolved, held and scalar
 * nodes of schedule.structure_key, the same as schedule._walk's, with an explicit stack;
 * toposort(root, stop): UOp.toposort; stage_anchors (in stages_native.c, which native.py compiles
 * after this file): lazyarr.compiler.stages.stage_anchors. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

typedef struct {
    PyObject_HEAD
    PyObject *op, *dtype, *src, *arg;
    PyObject *shape, *ranges, *bounds, *view, *grad;   /* caches, read as None until set */
    PyObject *holder;                                  /* a weak reference to an array holding the node */
    PyObject *akey;                                    /* the arg's key (uop._arg_key), once a walk asked */
    Py_hash_t hash;                                    /* the key's hash */
    int in_table;                                      /* whether the table holds it */
    PyObject *weakrefs;
    unsigned long walk;                                /* the last walk that gave this node a position */
    Py_ssize_t position;                               /* ... and that position */
} Node;

static PyTypeObject NodeType;
static PyObject *arg_key;            /* uop._arg_key: float and complex args are keyed by their bits */
static PyObject *op_buffer;          /* Ops.BUFFER, set by setup() */
static PyObject *op_const;           /* Ops.CONST */
static PyObject *liftable;           /* uop.liftable: whether a constant's value is a kernel argument */
static PyObject *lifted_dtypes, *baked_floats;   /* uop.LIFTED_DTYPES, uop.BAKED_FLOATS (frozensets) */
static PyObject *shape_of;           /* lazyarr.compiler.uop.shape_of, for a shape not yet known */
static PyObject *str_size, *str_device, *str_name, *str_uop;
static PyObject *atom_types;         /* types whose values hold no node (Ops, DType), set by setup() */
static PyObject *op_range;           /* Ops.RANGE: its cached ranges hold the node itself */

/* uop._arg_key(x) of a float: ("f", its float64 bits, little-endian) or ("f", "nan") (a new
 * constant every step of a loop whose scalar changes: no call into Python for it). */
static PyObject *float_key(double d) {
    static PyObject *f, *nan;
    if (f == NULL && ((f = PyUnicode_InternFromString("f")) == NULL || (nan = PyUnicode_InternFromString("nan")) == NULL))
        return NULL;
    if (d != d) return PyTuple_Pack(2, f, nan);
    unsigned char bits[8];
    if (PyFloat_Pack8(d, (char *)bits, 1) < 0) return NULL;
    PyObject *packed = PyBytes_FromStringAndSize((const char *)bits, 8);
    PyObject *key = packed ? PyTuple_Pack(2, f, packed) : NULL;
    Py_XDECREF(packed);
    return key;
}

/* uop._arg_key(arg) (a new reference): float and complex arguments by their bits, any other
 * itself. Walks use it as the arg's atom. */
static PyObject *arg_key_of(PyObject *arg) {
    if (PyFloat_CheckExact(arg)) return float_key(PyFloat_AS_DOUBLE(arg));
    if (PyComplex_CheckExact(arg)) {
        if (arg_key == NULL) {
            PyErr_SetString(PyExc_RuntimeError, "uop_native.setup() was not called");
            return NULL;
        }
        return PyObject_CallOneArg(arg_key, arg);
    }
    Py_INCREF(arg);
    return arg;
}

/* A float's bits as its key has them: every NaN one. */
static inline uint64_t float_bits(double d) {
    uint64_t bits;
    if (d != d) return 0x7ff8000000000001ULL;
    memcpy(&bits, &d, sizeof bits);
    return bits;
}

static inline uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

/* The hash of the key (op, dtype, src, arg); -1 with an error (an unhashable arg). */
static Py_hash_t key_hash(PyObject *op, PyObject *dtype, PyObject *src, PyObject *arg) {
    uint64_t h = mix((uint64_t)(uintptr_t)op >> 4, (uint64_t)(uintptr_t)dtype >> 4);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(src); i++) h = mix(h, (uint64_t)(uintptr_t)PyTuple_GET_ITEM(src, i) >> 4);
    if (PyFloat_CheckExact(arg)) {
        h = mix(h, float_bits(PyFloat_AS_DOUBLE(arg)));
    } else if (PyComplex_CheckExact(arg)) {
        Py_complex c = PyComplex_AsCComplex(arg);
        h = mix(mix(h, float_bits(c.real)), float_bits(c.imag) ^ 0x5bd1e995ULL);
    } else {
        Py_hash_t a = PyObject_Hash(arg);
        if (a == -1) return -1;
        h = mix(h, (uint64_t)a);
    }
    h ^= h >> 33;   /* (the low bits choose the slot: every bit of the key reaches them) */
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    Py_hash_t out = (Py_hash_t)(h & ((uint64_t)PY_SSIZE_T_MAX));
    return out == -1 ? 1 : out;
}

/* Whether two args have one key (_arg_key's equality); -1 with an error. May run Python (an arg's
 * __eq__). */
static int same_arg(PyObject *a, PyObject *b) {
    if (a == b) return 1;
    int fa = PyFloat_CheckExact(a), fb = PyFloat_CheckExact(b);
    if (fa || fb) return fa && fb && float_bits(PyFloat_AS_DOUBLE(a)) == float_bits(PyFloat_AS_DOUBLE(b));
    int ca = PyComplex_CheckExact(a), cb = PyComplex_CheckExact(b);
    if (ca || cb) {
        if (!(ca && cb)) return 0;
        Py_complex x = PyComplex_AsCComplex(a), y = PyComplex_AsCComplex(b);
        return float_bits(x.real) == float_bits(y.real) && float_bits(x.imag) == float_bits(y.imag);
    }
    return PyObject_RichCompareBool(a, b, Py_EQ);
}

#define TOMB ((Node *)1)
static Node **slots;            /* the table: NULL (never used), TOMB (a node left) or a node */
static size_t capacity;         /* a power of two */
static size_t live, filled;     /* slots holding nodes; holding nodes or tombs */

/* Rebuild the table with room for `need` nodes, tombs dropped (so a table that held a large graph
 * shrinks at the first rebuild after it went). Runs no Python. */
static int rebuild(size_t need) {
    size_t cap = 1024;
    while (cap < 2 * need + 16) cap *= 2;
    Node **fresh = PyMem_Calloc(cap, sizeof(Node *));
    if (fresh == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < capacity; i++) {
        Node *n = slots[i];
        if (n == NULL || n == TOMB) continue;
        size_t j = (size_t)n->hash & (cap - 1);
        while (fresh[j] != NULL) j = (j + 1) & (cap - 1);
        fresh[j] = n;
    }
    PyMem_Free(slots);
    slots = fresh;
    capacity = cap;
    filled = live;
    return 0;
}

/* The live node of the key (a new reference), NULL with no error if there is none. A node of no
 * references is not live: the trashcan (which defers freeing deep chains of objects) may still
 * hold it, in the table until it is freed, beside the new node of its key. The nodes that match
 * but for the arg are held while their args are compared (an arg's __eq__ may run Python, which
 * may build and free nodes and move the table). */
static PyObject *lookup(PyObject *op, PyObject *dtype, PyObject *src, PyObject *arg, Py_hash_t hash) {
    Py_ssize_t ns = PyTuple_GET_SIZE(src), found = 0, room = 4;
    Node *stack_candidates[4], **candidates = stack_candidates;
    for (size_t i = (size_t)hash & (capacity - 1); slots[i] != NULL; i = (i + 1) & (capacity - 1)) {
        Node *n = slots[i];
        if (n == TOMB || n->hash != hash || n->op != op || n->dtype != dtype || PyTuple_GET_SIZE(n->src) != ns ||
            Py_REFCNT(n) == 0)
            continue;
        Py_ssize_t j = 0;
        while (j < ns && PyTuple_GET_ITEM(n->src, j) == PyTuple_GET_ITEM(src, j)) j++;
        if (j < ns) continue;
        if (n->arg == arg) {   /* (the commonest: the same object) */
            Py_INCREF(n);
            for (Py_ssize_t k = 0; k < found; k++) Py_DECREF(candidates[k]);
            if (candidates != stack_candidates) PyMem_Free(candidates);
            return (PyObject *)n;
        }
        if (found == room) {
            Node **more = PyMem_Malloc(2 * room * sizeof(Node *));
            if (more == NULL) {   /* (not "none found": a second node of the key would follow) */
                for (Py_ssize_t k = 0; k < found; k++) Py_DECREF(candidates[k]);
                if (candidates != stack_candidates) PyMem_Free(candidates);
                PyErr_NoMemory();
                return NULL;
            }
            memcpy(more, candidates, found * sizeof(Node *));
            if (candidates != stack_candidates) PyMem_Free(candidates);
            candidates = more;
            room *= 2;
        }
        Py_INCREF(n);
        candidates[found++] = n;
    }
    PyObject *answer = NULL;
    for (Py_ssize_t k = 0; k < found; k++) {
        Node *n = candidates[k];
        if (answer == NULL && !PyErr_Occurred()) {
            int same = same_arg(n->arg, arg);
            if (same == 1 && n->in_table) {
                answer = (PyObject *)n;
                continue;
            }
        }
        Py_DECREF(n);
    }
    if (candidates != stack_candidates) PyMem_Free(candidates);
    return answer;
}

/* Put node n (not in the table, its hash set) into it. */
static int insert(Node *n) {
    if (4 * (filled + 1) > 3 * capacity && rebuild(live + 1) < 0) return -1;
    size_t i = (size_t)n->hash & (capacity - 1);
    while (slots[i] != NULL && slots[i] != TOMB) i = (i + 1) & (capacity - 1);
    if (slots[i] == NULL) filled++;
    slots[i] = n;
    live++;
    n->in_table = 1;
    return 0;
}

/* Leave the table. */
static int forget(Node *self) {
    if (!self->in_table) return 0;
    self->in_table = 0;
    for (size_t i = (size_t)self->hash & (capacity - 1); slots[i] != NULL; i = (i + 1) & (capacity - 1))
        if (slots[i] == self) {
            slots[i] = TOMB;
            live--;
            return 0;
        }
    PyErr_SetString(PyExc_RuntimeError, "uop_native: a node missing from the table");   /* (cannot happen) */
    return -1;
}

/* The live node (op, dtype, src, arg), a new reference, or NULL (with an error, or none). */
static PyObject *find_node(PyObject *op, PyObject *dtype, PyObject *src, PyObject *arg) {
    Py_hash_t hash = key_hash(op, dtype, src, arg);
    return hash == -1 ? NULL : lookup(op, dtype, src, arg, hash);
}

/* Whether x can hold no reference to a node: None, numbers, strings, the types of `atom_types`,
 * tuples of those. */
static int holds_no_node(PyObject *x, int depth) {
    PyTypeObject *t = Py_TYPE(x);
    if (x == Py_None || t == &PyLong_Type || t == &PyFloat_Type || t == &PyBool_Type || t == &PyUnicode_Type ||
        t == &PyComplex_Type || t == &PyBytes_Type)
        return 1;
    if (t == &PyTuple_Type) {
        if (depth > 3) return 0;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(x); i++)
            if (!holds_no_node(PyTuple_GET_ITEM(x, i), depth + 1)) return 0;
        return 1;
    }
    if (atom_types == NULL) return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(atom_types); i++)
        if (PyObject_TypeCheck(x, (PyTypeObject *)PyTuple_GET_ITEM(atom_types, i))) return 1;
    return 0;
}

/* Untrack the tuples of an arg that holds_no_node accepted. Its atoms (ops, dtypes) are objects the
 * collector tracks, so CPython never untracks a tuple holding one, like a reduction's (Ops.ADD,
 * (1,)): every such node of a loop's graph then outlived two collections into the oldest
 * generation, and their count set off a full collection of the process's heap every few loops
 * (~10 ms). Nothing an atom holds leads back to a node's arg, so these tuples are in no cycle. */
static void untrack_tuples(PyObject *x, int depth) {
    if (!PyTuple_CheckExact(x) || depth > 3) return;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(x); i++) untrack_tuples(PyTuple_GET_ITEM(x, i), depth + 1);
    if (PyObject_GC_IsTracked(x)) PyObject_GC_UnTrack(x);
}

static PyObject *make_node(PyTypeObject *type, PyObject *op, PyObject *dtype, PyObject *src, PyObject *arg);

static PyObject *node_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"op", "dtype", "src", "arg", NULL};
    PyObject *op, *dtype, *src = NULL, *arg = Py_None;
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (kwds == NULL && n >= 2 && n <= 4) {
        op = PyTuple_GET_ITEM(args, 0);
        dtype = PyTuple_GET_ITEM(args, 1);
        if (n > 2) src = PyTuple_GET_ITEM(args, 2);
        if (n > 3) arg = PyTuple_GET_ITEM(args, 3);
    } else if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|OO:UOp", kwlist, &op, &dtype, &src, &arg)) {
        return NULL;
    }
    if (src == NULL) src = PyTuple_New(0);
    else if (PyTuple_Check(src)) Py_INCREF(src);
    else {
        PyErr_Format(PyExc_TypeError, "a node's sources must be a tuple, got %.100s", Py_TYPE(src)->tp_name);
        return NULL;
    }
    if (src == NULL) return NULL;
    Py_ssize_t ns = PyTuple_GET_SIZE(src);
    for (Py_ssize_t i = 0; i < ns; i++) {
        if (!PyObject_TypeCheck(PyTuple_GET_ITEM(src, i), &NodeType)) {
            PyErr_Format(PyExc_TypeError, "a node's sources must be nodes, got %.100s",
                         Py_TYPE(PyTuple_GET_ITEM(src, i))->tp_name);
            Py_DECREF(src);
            return NULL;
        }
    }
    return make_node(type, op, dtype, src, arg);
}

/* The node (op, dtype, src, arg) of class `type`: the live one of that key, else a new one. Takes
 * the reference to src, a tuple of nodes (the callers in C build it so). */
static PyObject *make_node(PyTypeObject *type, PyObject *op, PyObject *dtype, PyObject *src, PyObject *arg) {
    Py_hash_t hash = key_hash(op, dtype, src, arg);
    PyObject *found = hash == -1 ? NULL : lookup(op, dtype, src, arg, hash);
    if (found != NULL || PyErr_Occurred()) {
        Py_DECREF(src);
        return found;
    }
    Node *self = (Node *)type->tp_alloc(type, 0);
    if (self == NULL) {
        Py_DECREF(src);
        return NULL;
    }
    Py_INCREF(op);
    Py_INCREF(dtype);
    Py_INCREF(arg);
    self->op = op;
    self->dtype = dtype;
    self->src = src;
    self->arg = arg;
    self->hash = hash;
    if (insert(self) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    /* A node is in no reference cycle unless its arg or a cache leads back to it: sources are older
     * nodes, and the caches hold shapes, bounds, other nodes' views and weak references. So the
     * cycle collector need not follow it (a loop's graph is thousands of nodes, and each full
     * collection walked them all), except where the arg may hold anything (a BUFFER's Buffer, a
     * call's function) and for RANGE, whose cached ranges include itself. */
    if (op != op_range && holds_no_node(arg, 0)) {   /* (its sources too: CPython keeps a tuple of */
        PyObject_GC_UnTrack(self);                    /* nodes tracked, however untracked they are) */
        if (PyObject_GC_IsTracked(src)) PyObject_GC_UnTrack(src);
        untrack_tuples(arg, 0);
    }
    return (PyObject *)self;
}

static int node_traverse(Node *self, visitproc visit, void *arg) {
    Py_VISIT(self->op);
    Py_VISIT(self->dtype);
    Py_VISIT(self->src);
    Py_VISIT(self->arg);
    Py_VISIT(self->shape);
    Py_VISIT(self->ranges);
    Py_VISIT(self->bounds);
    Py_VISIT(self->view);
    Py_VISIT(self->grad);
    Py_VISIT(self->holder);
    return 0;
}

static void clear_fields(Node *self) {
    Py_CLEAR(self->op);
    Py_CLEAR(self->dtype);
    Py_CLEAR(self->src);
    Py_CLEAR(self->arg);
    Py_CLEAR(self->shape);
    Py_CLEAR(self->ranges);
    Py_CLEAR(self->bounds);
    Py_CLEAR(self->view);
    Py_CLEAR(self->grad);
    Py_CLEAR(self->holder);
    Py_CLEAR(self->akey);
}

static int node_clear(Node *self) {   /* the cycle collector: out of the table first */
    int rc = forget(self);
    clear_fields(self);
    return rc;
}

static void node_dealloc(Node *self) {
    PyObject_GC_UnTrack(self);
    Py_TRASHCAN_BEGIN(self, node_dealloc)
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    if (forget(self) < 0) PyErr_WriteUnraisable((PyObject *)self);
    if (self->weakrefs != NULL) PyObject_ClearWeakRefs((PyObject *)self);   /* callbacks may build nodes: after forget */
    clear_fields(self);
    PyErr_Restore(type, value, traceback);
    Py_TYPE(self)->tp_free((PyObject *)self);
    Py_TRASHCAN_END
}

static PyMemberDef node_members[] = {
    {"op", T_OBJECT, offsetof(Node, op), READONLY, NULL},
    {"dtype", T_OBJECT, offsetof(Node, dtype), READONLY, NULL},
    {"src", T_OBJECT, offsetof(Node, src), READONLY, NULL},
    {"arg", T_OBJECT, offsetof(Node, arg), READONLY, NULL},
    {NULL},
};

/* The tensor-level shape, computed once by the op's shape rule (UOp.shape). */
static PyObject *node_get_shape(Node *self, void *closure) {
    if (self->shape != NULL && self->shape != Py_None) {
        Py_INCREF(self->shape);
        return self->shape;
    }
    if (shape_of == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "uop_native.setup() was not called");
        return NULL;
    }
    PyObject *shape = PyObject_CallOneArg(shape_of, (PyObject *)self);
    if (shape == NULL) return NULL;
    Py_INCREF(shape);
    Py_XSETREF(self->shape, shape);
    return shape;
}

/* Whether a cache's value leads to no node other than nodes (which lead back to no user of theirs):
 * what holds_no_node allows, nodes, weak references without a callback, and tuples and frozensets
 * of these. */
static int leads_to_no_user(PyObject *x, int depth) {
    if (holds_no_node(x, 0) || PyObject_TypeCheck(x, &NodeType)) return 1;
    if (PyWeakref_CheckRefExact(x)) return ((PyWeakReference *)x)->wr_callback == NULL;
    if (depth > 3) return 0;
    if (PyTuple_CheckExact(x)) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(x); i++)
            if (!leads_to_no_user(PyTuple_GET_ITEM(x, i), depth + 1)) return 0;
        return 1;
    }
    if (PyFrozenSet_CheckExact(x)) {   /* (the public iterator: _PySet_NextEntry is private) */
        PyObject *it = PyObject_GetIter(x), *item;
        if (it == NULL) {
            PyErr_Clear();
            return 0;
        }
        int ok = 1;
        while (ok && (item = PyIter_Next(it)) != NULL) {
            ok = leads_to_no_user(item, depth + 1);
            Py_DECREF(item);
        }
        Py_DECREF(it);
        if (PyErr_Occurred()) {   /* (then the collector follows the node: the safe answer) */
            PyErr_Clear();
            ok = 0;
        }
        return ok;
    }
    return 0;
}

/* The caches (_shape, _ranges, _bounds, _view, _grad, _holder), by their offset: None until set. A
 * node the cycle collector does not follow (node_new) is followed again once a cache holds
 * something that might lead back to it. */
static PyObject *node_get_cache(Node *self, void *offset) {
    PyObject *v = *(PyObject **)((char *)self + (Py_ssize_t)offset);
    v = v == NULL ? Py_None : v;
    Py_INCREF(v);
    return v;
}

static int node_set_cache(Node *self, PyObject *value, void *offset) {
    if (value != NULL && !PyObject_GC_IsTracked((PyObject *)self) && !leads_to_no_user(value, 0))
        PyObject_GC_Track(self);
    /* a weak reference without a callback holds nothing strongly (each node an array made keeps one) */
    if (value != NULL && PyWeakref_CheckRefExact(value) && ((PyWeakReference *)value)->wr_callback == NULL &&
        PyObject_GC_IsTracked(value))
        PyObject_GC_UnTrack(value);
    Py_XINCREF(value);
    Py_XSETREF(*(PyObject **)((char *)self + (Py_ssize_t)offset), value);
    return 0;
}

#define CACHE(name, field) {name, (getter)node_get_cache, (setter)node_set_cache, NULL, (void *)offsetof(Node, field)}

static PyGetSetDef node_getset[] = {
    {"shape", (getter)node_get_shape, NULL, "The tensor-level shape (lazyarr.ops' rule, computed once).", NULL},
    CACHE("_shape", shape), CACHE("_ranges", ranges), CACHE("_bounds", bounds),
    CACHE("_view", view), CACHE("_grad", grad), CACHE("_holder", holder),
    {NULL},
};

static PyTypeObject NodeType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "lazyarr.compiler.uop_native.Node",
    .tp_basicsize = sizeof(Node),
    .tp_dealloc = (destructor)node_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A graph node, interned: see lazyarr.compiler.uop.UOp.",
    .tp_traverse = (traverseproc)node_traverse,
    .tp_clear = (inquiry)node_clear,
    .tp_weaklistoffset = offsetof(Node, weakrefs),
    .tp_members = node_members,
    .tp_getset = node_getset,
    .tp_new = node_new,
};

/* ---- liftable constants ------------------------------------------------------------------- */

/* uop.liftable(n), without a call into Python for the common cases: 1, 0, or -1 on an error. */
static int is_liftable(Node *n) {
    if (n->op != op_const) return 0;
    int lifted = PySet_Contains(lifted_dtypes, n->dtype);
    if (lifted <= 0) return lifted;
    PyObject *v = n->arg;
    if (PyFloat_CheckExact(v)) {
        double x = PyFloat_AS_DOUBLE(v);
        if (x != x || isinf(x)) return 0;
        if (x == 0.0 && signbit(x)) return 1;   /* -0.0: its sign is the code's */
        int baked = PySet_Contains(baked_floats, v);
        return baked < 0 ? -1 : !baked;
    }
    if (PyLong_CheckExact(v)) {
        int overflow;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (!overflow) {
            if (x == -1 && PyErr_Occurred()) return -1;
            return x != -1 && !(x >= 0 && (x & (x - 1)) == 0);
        }
    }
    PyObject *r = PyObject_CallOneArg(liftable, (PyObject *)n);   /* anything else: as Python says */
    int answer = r == NULL ? -1 : PyObject_IsTrue(r);
    Py_XDECREF(r);
    return answer;
}

/* ---- the structure walk ------------------------------------------------------------------ */

typedef struct {
    unsigned long id;     /* this walk's mark: a node with it has a position in the key */
    long long *words;     /* the key's words so far (see emit) */
    Py_ssize_t n_words, cap_words, n_parts;
    PyObject *inputs, *order, *resolved, *held, *scalars;
    PyObject *realized_for;
    PyObject *names;      /* the device names of the outputs (a set), or NULL */
    Py_ssize_t max_parts; /* stop once this many nodes have positions (0: never) */
} Walk;

static unsigned long walks;   /* walks so far: each marks the nodes it gave positions */
static int walking;           /* a walk is running (its marks would be overwritten by another) */
static PyObject *atoms;       /* uop.ATOMS: ops, dtypes, argument keys and device names -> their numbers */
static PyObject *atom_number; /* uop.atom_number: a new atom's number (the same in every process) */

static inline int visited(Walk *w, Node *n) { return n->walk == w->id; }

/* Whether a live array holds n: its holder (a weak reference) is alive and its _uop is n. */
static int is_held(Node *n) {
    if (n->holder == NULL || n->holder == Py_None) return 0;
    if (!PyWeakref_Check(n->holder)) {
        PyErr_SetString(PyExc_TypeError, "walk: a node's _holder is not a weak reference");
        return -1;
    }
    PyObject *array = PyWeakref_GetObject(n->holder);   /* borrowed; None once the array is gone */
    if (array == NULL) return -1;
    if (array == Py_None) return 0;
    Py_INCREF(array);
    PyObject *u = PyObject_GetAttr(array, str_uop);
    Py_DECREF(array);
    if (u == NULL) return -1;
    int held = u == (PyObject *)n;
    Py_DECREF(u);
    return held;
}

/* x's number in ATOMS (atom_number's, added if new), as schedule._atom. */
static int atom(PyObject *x, long long *out) {
    PyObject *id = PyDict_GetItemWithError(atoms, x);   /* borrowed */
    if (id == NULL) {
        if (PyErr_Occurred() || (id = PyObject_CallOneArg(atom_number, x)) == NULL) return -1;
        int rc = PyDict_SetItem(atoms, x, id);
        Py_DECREF(id);
        if (rc < 0) return -1;
    }
    *out = PyLong_AsLongLong(id);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

/* The atom of an op or a dtype. Both are singletons that live as long as the process, so their
 * atoms are remembered by address here (open addressing): looking one up in ATOMS would hash it,
 * a Python call per node (an enum's and a dtype's __hash__ are Python functions). */
#define FIXED_ATOMS 512
static PyObject *fixed_seen[FIXED_ATOMS];
static long long fixed_atom_of[FIXED_ATOMS];
static int fixed_atom(PyObject *x, long long *out) {
    size_t h = ((uintptr_t)x >> 4) & (FIXED_ATOMS - 1);
    for (int probe = 0; probe < FIXED_ATOMS; probe++, h = (h + 1) & (FIXED_ATOMS - 1)) {
        if (fixed_seen[h] == x) {
            *out = fixed_atom_of[h];
            return 0;
        }
        if (fixed_seen[h] == NULL) {
            if (atom(x, out) < 0) return -1;
            Py_INCREF(x);   /* (kept: an address in the table must never be another object's) */
            fixed_seen[h] = x;
            fixed_atom_of[h] = *out;
            return 0;
        }
    }
    return atom(x, out);   /* the table is full: ATOMS itself */
}

static int put(Walk *w, long long word) {
    if (w->n_words == w->cap_words) {
        Py_ssize_t cap = w->cap_words ? 2 * w->cap_words : 256;
        long long *grown = PyMem_Realloc(w->words, cap * sizeof(long long));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        w->words = grown;
        w->cap_words = cap;
    }
    w->words[w->n_words++] = word;
    return 0;
}

/* Append n's part to the key, as schedule._walk's words: a liftable constant's (-1, dtype's atom,
 * which scalar), a buffer's (-2, dtype's atom, size, its device's name's atom, which input), any
 * other node's (op's atom, dtype's atom, arg key's atom, number of sources, their positions, 1 when
 * a live array holds it (which lists it in held) else 0). */
static int emit(Walk *w, Node *n, int scalar) {
    long long dtype;
    if (fixed_atom(n->dtype, &dtype) < 0) return -1;
    if (scalar) {
        if (put(w, -1) < 0 || put(w, dtype) < 0 || put(w, PyList_GET_SIZE(w->scalars)) < 0 ||
            PyList_Append(w->scalars, (PyObject *)n) < 0)
            return -1;
    } else if (n->op == op_buffer) {
        PyObject *size = PyObject_GetAttr(n->arg, str_size);
        PyObject *device = size ? PyObject_GetAttr(n->arg, str_device) : NULL;
        PyObject *name = device ? PyObject_GetAttr(device, str_name) : NULL;
        long long nsize = size ? PyLong_AsLongLong(size) : -1, name_atom = 0;
        int rc = name == NULL || (nsize == -1 && PyErr_Occurred()) || atom(name, &name_atom) < 0 ? -1 : 0;
        Py_XDECREF(size);
        Py_XDECREF(device);
        Py_XDECREF(name);
        if (rc < 0 || put(w, -2) < 0 || put(w, dtype) < 0 || put(w, nsize) < 0 || put(w, name_atom) < 0 ||
            put(w, PyList_GET_SIZE(w->inputs)) < 0 || PyList_Append(w->inputs, n->arg) < 0)
            return -1;
    } else {
        long long op_atom, arg_atom;
        if (n->akey == NULL && (n->akey = arg_key_of(n->arg)) == NULL) return -1;
        if (fixed_atom(n->op, &op_atom) < 0 || atom(n->akey, &arg_atom) < 0) return -1;
        Py_ssize_t ns = PyTuple_GET_SIZE(n->src);
        if (put(w, op_atom) < 0 || put(w, dtype) < 0 || put(w, arg_atom) < 0 || put(w, ns) < 0) return -1;
        for (Py_ssize_t i = 0; i < ns; i++) {
            Node *s = (Node *)PyTuple_GET_ITEM(n->src, i);
            if (!visited(w, s)) {
                PyErr_SetString(PyExc_RuntimeError, "walk: a source was not visited");
                return -1;
            }
            if (put(w, s->position) < 0) return -1;
        }
        int held = is_held(n);
        if (held < 0 || put(w, held) < 0 || (held && PyList_Append(w->held, (PyObject *)n) < 0)) return -1;
    }
    n->walk = w->id;
    n->position = w->n_parts++;
    return PyList_Append(w->order, (PyObject *)n);
}

typedef struct {
    Node *node;
    Py_ssize_t child;   /* -1: not yet looked at */
} Frame;

/* Push node onto a depth-first stack of frames, growing it as needed. */
static int push(Frame **stack, Py_ssize_t *cap, Py_ssize_t *sp, Node *node) {
    if (*sp == *cap) {
        Frame *grown = PyMem_Realloc(*stack, 2 * *cap * sizeof(Frame));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        *stack = grown;
        *cap *= 2;
    }
    (*stack)[(*sp)++] = (Frame){node, -1};
    return 0;
}

/* Whether `view` (a buffer's node under reshapes) is of a buffer on one of the devices `names`
 * names: realized_for's common case, without calling it. */
static int on_devices(PyObject *view, PyObject *names) {
    while (PyObject_TypeCheck(view, &NodeType) && ((Node *)view)->op != op_buffer &&
           PyTuple_GET_SIZE(((Node *)view)->src) == 1)
        view = PyTuple_GET_ITEM(((Node *)view)->src, 0);   /* (reshapes: a view has no other op) */
    if (!PyObject_TypeCheck(view, &NodeType) || ((Node *)view)->op != op_buffer) return 0;
    PyObject *device = PyObject_GetAttr(((Node *)view)->arg, str_device);
    PyObject *name = device != NULL ? PyObject_GetAttr(device, str_name) : NULL;
    int found = name != NULL ? PySet_Contains(names, name) : -1;
    Py_XDECREF(device);
    Py_XDECREF(name);
    if (found < 0) PyErr_Clear();   /* (then Python answers) */
    return found > 0;
}

/* Depth first from root, sources before users. With check_views, a node with a buffer (its _view)
 * that `realized_for` accepts counts as that buffer's view, whose nodes are emitted plainly.
 * Returns 0, -1 on an error, or 1 where it stopped at w->max_parts nodes. */
static int walk_from(Walk *w, Node *root, int check_views) {
    Py_ssize_t cap = 64, sp = 0;
    Frame *stack = PyMem_Malloc(cap * sizeof(Frame));
    if (stack == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    stack[sp++] = (Frame){root, -1};
    while (sp > 0) {
        Frame *f = &stack[sp - 1];
        Node *n = f->node;
        if (f->child < 0) {
            if (visited(w, n)) {
                sp--;
                continue;
            }
            if (!n->in_table) {
                PyErr_SetString(PyExc_RuntimeError, "walk: a node that left the table");
                goto error;
            }
            PyObject *view = n->view;
            if (check_views && view != NULL && view != Py_None && view != (PyObject *)n) {
                int ok = w->names != NULL ? on_devices(view, w->names) : 0;
                if (ok == 0) {   /* not on the outputs' devices, as far as C sees: as Python says */
                    PyObject *r = PyObject_CallFunctionObjArgs(w->realized_for, (PyObject *)n, view, NULL);
                    ok = r == NULL ? -1 : PyObject_IsTrue(r);
                    Py_XDECREF(r);
                }
                if (ok < 0) goto error;
                if (ok) {
                    if (!PyObject_TypeCheck(view, &NodeType)) {
                        PyErr_SetString(PyExc_TypeError, "walk: a node's _view is not a node");
                        goto error;
                    }
                    int rc = PyDict_SetItem(w->resolved, (PyObject *)n, view) < 0 ? -1 : walk_from(w, (Node *)view, 0);
                    if (rc < 0) goto error;
                    if (rc > 0) goto stopped;
                    n->walk = w->id;   /* the node reads as its view */
                    n->position = ((Node *)view)->position;
                    sp--;
                    continue;
                }
            }
            int scalar = check_views ? is_liftable(n) : 0;
            if (scalar < 0) goto error;
            if (n->op == op_buffer || scalar) {
                if (emit(w, n, scalar) < 0) goto error;
                sp--;
                continue;
            }
            f->child = 0;
        }
        Py_ssize_t ns = PyTuple_GET_SIZE(n->src);
        Node *next = NULL;
        while (f->child < ns) {
            Node *c = (Node *)PyTuple_GET_ITEM(n->src, f->child++);
            if (!visited(w, c)) {
                next = c;
                break;
            }
        }
        if (next != NULL) {
            if (push(&stack, &cap, &sp, next) < 0) goto error;
            continue;
        }
        if (emit(w, n, 0) < 0) goto error;
        sp--;
        if (w->max_parts && w->n_parts >= w->max_parts) goto stopped;
    }
    PyMem_Free(stack);
    return 0;
stopped:
    PyMem_Free(stack);
    return 1;
error:
    PyMem_Free(stack);
    return -1;
}

static PyObject *walk(PyObject *module, PyObject *args) {
    PyObject *sink, *realized_for, *names = NULL;
    Py_ssize_t max_parts = 0;
    if (!PyArg_ParseTuple(args, "O!O|O!n:walk", &NodeType, &sink, &realized_for, &PySet_Type, &names, &max_parts))
        return NULL;
    if (op_buffer == NULL || atoms == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "uop_native.setup() was not called");
        return NULL;
    }
    if (walking) {   /* only realized_for runs Python during a walk, and it does not walk */
        PyErr_SetString(PyExc_RuntimeError, "walk: called during another walk");
        return NULL;
    }
    Walk w = {++walks, NULL, 0, 0, 0, PyList_New(0), PyList_New(0), PyDict_New(), PyList_New(0), PyList_New(0),
              realized_for, names, max_parts > 0 ? max_parts : 0};
    PyObject *result = NULL;
    walking = 1;
    int rc = w.inputs && w.order && w.resolved && w.held && w.scalars ? walk_from(&w, (Node *)sink, 1) : -1;
    if (rc == 0) {
        PyObject *key = PyBytes_FromStringAndSize((const char *)w.words, w.n_words * (Py_ssize_t)sizeof(long long));
        if (key != NULL) result = PyTuple_Pack(6, key, w.inputs, w.order, w.resolved, w.held, w.scalars);
        Py_XDECREF(key);
    } else if (rc > 0) {   /* stopped: the nodes met so far, sources first, and no key */
        result = PyTuple_Pack(6, Py_None, w.inputs, w.order, w.resolved, w.held, w.scalars);
    }
    walking = 0;
    PyMem_Free(w.words);
    Py_XDECREF(w.held);
    Py_XDECREF(w.scalars);
    Py_XDECREF(w.inputs);
    Py_XDECREF(w.order);
    Py_XDECREF(w.resolved);
    return result;
}

/* ---- toposort --------------------------------------------------------------------------- */

/* Every node reachable from root, sources before users, in UOp.toposort's order (depth first, a
 * node's sources in order); stop(u) true (stop: a callable or None): u is included but its sources
 * are not visited. (A set of the nodes met, not walk marks: stop may run Python that walks.) */
static PyObject *toposort_of(PyObject *root, PyObject *stop) {
    PyObject *order = PyList_New(0), *seen = PySet_New(NULL);
    Py_ssize_t cap = 64, sp = 0;
    Frame *stack = PyMem_Malloc(cap * sizeof(Frame));
    if (order == NULL || seen == NULL || stack == NULL) {
        if (stack == NULL) PyErr_NoMemory();
        goto error;
    }
    stack[sp++] = (Frame){(Node *)root, -1};
    while (sp > 0) {
        Frame *f = &stack[sp - 1];
        Node *n = f->node;
        if (f->child < 0) {
            int known = PySet_Contains(seen, (PyObject *)n);
            if (known < 0) goto error;
            if (known) {
                sp--;
                continue;
            }
            if (PySet_Add(seen, (PyObject *)n) < 0) goto error;
            f->child = 0;
            if (stop != Py_None) {
                PyObject *r = PyObject_CallOneArg(stop, (PyObject *)n);
                int stopped = r == NULL ? -1 : PyObject_IsTrue(r);
                Py_XDECREF(r);
                if (stopped < 0) goto error;
                f = &stack[sp - 1];   /* (the callback cannot touch this stack, but be plain about it) */
                if (stopped) f->child = PyTuple_GET_SIZE(n->src);
            }
        }
        Py_ssize_t ns = PyTuple_GET_SIZE(n->src);
        Node *next = NULL;
        while (f->child < ns) {
            Node *c = (Node *)PyTuple_GET_ITEM(n->src, f->child++);
            int known = PySet_Contains(seen, (PyObject *)c);
            if (known < 0) goto error;
            if (!known) {
                next = c;
                break;
            }
        }
        if (next != NULL) {
            if (push(&stack, &cap, &sp, next) < 0) goto error;
            continue;
        }
        if (PyList_Append(order, (PyObject *)n) < 0) goto error;
        sp--;
    }
    PyMem_Free(stack);
    Py_DECREF(seen);
    return order;
error:
    PyMem_Free(stack);
    Py_XDECREF(seen);
    Py_XDECREF(order);
    return NULL;
}

static PyObject *toposort(PyObject *module, PyObject *args) {
    PyObject *root, *stop = Py_None;
    if (!PyArg_ParseTuple(args, "O!|O:toposort", &NodeType, &root, &stop)) return NULL;
    return toposort_of(root, stop);
}

/* The stages' anchors (stages_native.c, compiled after this file). */
static PyObject *stage_anchors(PyObject *module, PyObject *args);
static PyObject *setup_stages(PyObject *module, PyObject *args);
/* Recording array operations (record_native.c, compiled after stages_native.c): its functions. */
static int add_record_functions(PyObject *module);
/* The buffer pass of prepared launches (buffers_native.c, compiled last): its functions. */
static int add_buffer_functions(PyObject *module);

/* ---- the rest of the table's interface ----------------------------------------------------- */

static PyObject *setup(PyObject *module, PyObject *args) {
    PyObject *key_fn, *buffer, *shape_fn, *constant, *liftable_fn, *lifted, *baked, *atom_table, *types, *range,
        *number_fn;
    if (!PyArg_ParseTuple(args, "OOOOOO!O!O!O!OO:setup", &key_fn, &buffer, &shape_fn, &constant, &liftable_fn,
                          &PyFrozenSet_Type, &lifted, &PyFrozenSet_Type, &baked, &PyDict_Type, &atom_table,
                          &PyTuple_Type, &types, &range, &number_fn))
        return NULL;
    Py_INCREF(number_fn);
    Py_XSETREF(atom_number, number_fn);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(types); i++)
        if (!PyType_Check(PyTuple_GET_ITEM(types, i))) {
            PyErr_SetString(PyExc_TypeError, "setup: the atom types must be types");
            return NULL;
        }
    Py_INCREF(types);
    Py_XSETREF(atom_types, types);
    Py_INCREF(range);
    Py_XSETREF(op_range, range);
    Py_INCREF(atom_table);
    Py_XSETREF(atoms, atom_table);
    Py_INCREF(lifted);
    Py_INCREF(baked);
    Py_XSETREF(lifted_dtypes, lifted);
    Py_XSETREF(baked_floats, baked);
    Py_INCREF(key_fn);
    Py_INCREF(buffer);
    Py_INCREF(shape_fn);
    Py_INCREF(constant);
    Py_INCREF(liftable_fn);
    Py_XSETREF(arg_key, key_fn);
    Py_XSETREF(op_buffer, buffer);
    Py_XSETREF(shape_of, shape_fn);
    Py_XSETREF(op_const, constant);
    Py_XSETREF(liftable, liftable_fn);
    Py_RETURN_NONE;
}

static PyObject *node_exists(PyObject *module, PyObject *args) {
    PyObject *op, *dtype, *src, *arg;
    if (!PyArg_ParseTuple(args, "OOO!O:node_exists", &op, &dtype, &PyTuple_Type, &src, &arg)) return NULL;
    PyObject *found = find_node(op, dtype, src, arg);
    if (found == NULL && PyErr_Occurred()) return NULL;
    Py_XDECREF(found);
    return PyBool_FromLong(found != NULL);
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS,
     "setup(arg_key, Ops.BUFFER, shape_of, Ops.CONST, liftable, LIFTED_DTYPES, BAKED_FLOATS, ATOMS, "
     "atom types, Ops.RANGE, atom_number): what keys, walks, shapes and the cycle collector's exemption need from "
     "Python."},
    {"walk", walk, METH_VARARGS, "walk(sink, realized_for, names=None, max_parts=0) -> (key, inputs, order, resolved, held, "
     "scalars); a realized node whose buffer is on a device of the set `names` is taken without asking realized_for; "
     "with max_parts, a walk that gives that many nodes positions stops there, and its key is None."},
    {"toposort", toposort, METH_VARARGS, "toposort(root, stop=None) -> the nodes under root, sources first."},
    {"node_exists", node_exists, METH_VARARGS, "node_exists(op, dtype, src, arg): whether the node is alive."},
    {"setup_stages", setup_stages, METH_VARARGS, "setup_stages(...): what stage_anchors needs from Python."},
    {"stage_anchors", stage_anchors, METH_VARARGS, "stage_anchors(sink, device) -> [(anchor, device, fingerprint)]."},
    {NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "uop_native", NULL, -1, methods};

PyMODINIT_FUNC PyInit_uop_native(void) {
    if (PyType_Ready(&NodeType) < 0) return NULL;
    if (rebuild(0) < 0) return NULL;
    str_size = PyUnicode_InternFromString("size");
    str_device = PyUnicode_InternFromString("device");
    str_name = PyUnicode_InternFromString("name");
    str_uop = PyUnicode_InternFromString("_uop");
    if (str_size == NULL || str_device == NULL || str_name == NULL || str_uop == NULL) return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL) return NULL;
    Py_INCREF(&NodeType);
    if (PyModule_AddObject(m, "Node", (PyObject *)&NodeType) < 0) {
        Py_DECREF(&NodeType);
        Py_DECREF(m);
        return NULL;
    }
    if (add_record_functions(m) < 0 || add_buffer_functions(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
