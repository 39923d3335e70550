/* The graph's hottest loops in C: building a node (the intern table), the schedule cache's walk
 * and toposort. lazyarr.compiler.native builds this file with the CPU device's C compiler on first
 * use; the Python versions (uop._PyNode, walk._walk, uop._py_toposort) are the reference and
 * the fallback, and the tests check that both give the same results.
 *
 * Node: the base of uop.UOp. Building (op, dtype, src, arg) returns the live node of that key if
 * there is one. The table (open addressing, linear probing) holds the nodes' addresses by the hash
 * of their key (op and dtype by identity, the sources by identity, the arg by its key: uop.arg_key's
 * equality, a float by its bits) and no reference: a node leaves the table when it is freed (or
 * cleared by the cycle collector) before anything else happens to it (its weak references'
 * callbacks run after), and a lookup passes over a node whose freeing is deferred. (A dict of key
 * tuples cost three allocations and four lookups a node: a loop builds thousands.)
 *
 * walk(sink, realized_for, names): the key (as bytes), input buffers, order, resolved, held and scalar
 * nodes of walk.structure_key, the same as walk._walk's, with an explicit stack;
 * toposort(root, stop): UOp.toposort (both in walk_native.c, which native.py compiles right after
 * this file); stage_anchors (in stages_native.c, after that): lazyarr.compiler.stages.stage_anchors. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

typedef struct {
    PyObject_HEAD
    PyObject *op, *dtype, *src, *arg;
    PyObject *shape, *ranges, *bounds, *view, *grad;   /* caches, read as None until set */
    PyObject *holder;                                  /* a weak reference to an array holding the node */
    long long arg_atom;                                /* its arg key's atom (uop.arg_key's number in ATOMS), */
    int arg_atom_known;                                /* ... once a walk asked (ATOMS never renumbers) */
    Py_hash_t hash;                                    /* the key's hash */
    int in_table;                                      /* whether the table holds it */
    PyObject *weakrefs;
    unsigned long walk;                                /* the last walk that gave this node a position */
    Py_ssize_t position;                               /* ... and that position */
} Node;

static PyTypeObject NodeType;
static PyObject *arg_key;            /* uop.arg_key: float and complex args are keyed by their bits */
static PyObject *op_buffer;          /* Ops.BUFFER, set by setup() */
static PyObject *op_const;           /* Ops.CONST */
static PyObject *liftable;           /* uop.liftable: whether a constant's value is a kernel argument */
static PyObject *lifted_dtypes, *baked_floats;   /* uop.LIFTED_DTYPES, uop.BAKED_FLOATS (frozensets) */
static PyObject *shape_of;           /* lazyarr.compiler.uop.shape_of, for a shape not yet known */
static PyObject *str_size, *str_device, *str_name, *str_uop;
static PyObject *atom_types;         /* types whose values hold no node (Ops, DType), set by setup() */
static PyObject *op_range;           /* Ops.RANGE: its cached ranges hold the node itself */
static unsigned long walks;   /* walks so far: each marks the nodes it gave positions */
static int walking;           /* a walk is running (its marks would be overwritten by another) */
static PyObject *atoms;       /* uop.ATOMS: ops, dtypes, argument keys and device names -> their numbers */
static PyObject *atom_number; /* uop.atom_number: a new atom's number (the same in every process) */

/* uop.arg_key(x) of a float: ("f", its float64 bits, little-endian) or ("f", "nan") (a new
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

/* uop.arg_key(arg) (a new reference): float and complex arguments by their bits, any other
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

/* Whether two args have one key (arg_key's equality); -1 with an error. May run Python (an arg's
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

/* ---- facts remembered by address ------------------------------------------------------------ */

/* A fact about objects that live as long as the process (ops, dtypes, device names), found once
 * by `find` and remembered by address (open addressing over `size` slots, a power of two): a
 * lookup by value would hash the object, for some a Python call, for every node. The table keeps
 * a reference to each key, so that an address in it is never another object's. */
typedef struct { PyObject *key; long long fact; } Remembered;

static int remembered(Remembered *table, size_t size, PyObject *x, int (*find)(PyObject *, long long *),
                      long long *out) {
    size_t h = ((uintptr_t)x >> 4) & (size - 1);
    for (size_t probe = 0; probe < size; probe++, h = (h + 1) & (size - 1)) {
        if (table[h].key == x) {
            *out = table[h].fact;
            return 0;
        }
        if (table[h].key == NULL) {
            if (find(x, out) < 0) return -1;
            Py_INCREF(x);
            table[h].key = x;
            table[h].fact = *out;
            return 0;
        }
    }
    return find(x, out);   /* the table is full */
}
#define REMEMBERED(table, x, find, out) remembered(table, sizeof(table) / sizeof(*(table)), x, find, out)

/* ---- liftable constants ------------------------------------------------------------------- */

static int find_lifted(PyObject *dtype, long long *out) {
    int lifted = PySet_Contains(lifted_dtypes, dtype);
    *out = lifted;
    return lifted < 0 ? -1 : 0;
}

static Remembered lifted_by_dtype[64];

/* uop.liftable(n), without a call into Python for the common cases: 1, 0, or -1 on an error. */
static int is_liftable(Node *n) {
    if (n->op != op_const) return 0;
    long long lifted;   /* (whether the dtype is in LIFTED_DTYPES) */
    if (REMEMBERED(lifted_by_dtype, n->dtype, find_lifted, &lifted) < 0) return -1;
    if (!lifted) return 0;
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

/* The structure walk and toposort (walk_native.c, compiled right after this file). */
static PyObject *walk(PyObject *module, PyObject *args);
static PyObject *toposort(PyObject *module, PyObject *args);
/* The stages' anchors (stages_native.c, compiled after walk_native.c). */
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
