/* lazyarr.compiler.stages.stage_anchors in C (compiled after uop_native.c, whose Node and walk marks
 * it uses). It computes the same fingerprints as the Python version: every hash is
 * Python's hash of the same tuple of the same ints (built here and hashed by PyObject_Hash), and
 * the arguments Python hashes with stages.stable_hash are hashed here the same way (None, ints and
 * floats in C, anything else by calling stable_hash), so both choose the same anchors; the tests
 * compare them. Per node it needs no Python call but for shapes not yet known and such arguments. */

#define MAX_DEPTH 8

static struct {
    PyObject *stable_hash, *storage_device;   /* stages.stable_hash, stages._storage_device */
    PyObject *not_values, *movement, *own_size, *pass_to_reduction, *positions;   /* frozensets of Ops */
    PyObject *op_call, *op_copy, *op_noop, *op_shrink, *op_reduce;
    int depth, max_levels, positional_nodes;
    struct { PyObject *dtype, *hash; long itemsize; } dtypes[64];
    int n_dtypes;
    PyObject *spare_hash;
} st;

/* An Ops member's facts, remembered by address (a set lookup hashes the op, for every node): its
 * value, and which of setup_stages' frozensets hold it, as value * 32 + one bit per set. */
enum { IN_NOT_VALUES = 1, IN_MOVEMENT = 2, IN_OWN_SIZE = 4, IN_PASS_TO_REDUCTION = 8, IN_POSITIONS = 16 };
static Remembered facts_by_op[256];

static int find_op_facts(PyObject *op, long long *out) {
    PyObject *v = PyObject_GetAttrString(op, "value");
    long long value = v ? PyLong_AsLongLong(v) : -1;
    Py_XDECREF(v);
    if (v == NULL || (value == -1 && PyErr_Occurred())) return -1;
    PyObject *sets[] = {st.not_values, st.movement, st.own_size, st.pass_to_reduction, st.positions};
    *out = value * 32;
    for (int i = 0; i < 5; i++) {
        int has = PySet_Contains(sets[i], op);
        if (has < 0) return -1;
        if (has) *out |= 1 << i;
    }
    return 0;
}

/* Whether op is in the frozenset `flag` names (1, 0, or -1 with an exception). */
static int op_in(PyObject *op, int flag) {
    long long facts;
    return REMEMBERED(facts_by_op, op, find_op_facts, &facts) < 0 ? -1 : (facts & flag) != 0;
}

static int op_value(PyObject *op, long long *out) {
    long long facts;
    if (REMEMBERED(facts_by_op, op, find_op_facts, &facts) < 0) return -1;
    *out = facts >> 5;   /* (an arithmetic shift: Ops values are small and not negative) */
    return 0;
}

static PyObject *setup_stages(PyObject *module, PyObject *args) {
    PyObject *stable_hash, *storage_device, *not_values, *movement, *own_size, *pass_to_reduction, *positions,
             *call, *copy, *noop, *shrink, *reduce;
    if (!PyArg_ParseTuple(args, "OOOOOOOiOOOOOii:setup_stages", &stable_hash, &storage_device, &not_values,
                          &movement, &own_size, &pass_to_reduction, &positions, &st.positional_nodes, &call, &copy,
                          &noop, &shrink, &reduce, &st.depth, &st.max_levels))
        return NULL;
    if (st.depth < 0 || st.depth >= MAX_DEPTH) {
        PyErr_SetString(PyExc_ValueError, "setup_stages: a fingerprint depth of 0..7");
        return NULL;
    }
    PyObject *objs[] = {stable_hash, storage_device, not_values, movement, own_size, pass_to_reduction, positions,
                        call, copy, noop, shrink, reduce};
    PyObject **slots[] = {&st.stable_hash, &st.storage_device, &st.not_values, &st.movement, &st.own_size,
                          &st.pass_to_reduction, &st.positions, &st.op_call, &st.op_copy, &st.op_noop,
                          &st.op_shrink, &st.op_reduce};
    for (int i = 0; i < 12; i++) {
        Py_INCREF(objs[i]);
        Py_XSETREF(*slots[i], objs[i]);
    }
    for (size_t i = 0; i < sizeof(facts_by_op) / sizeof(*facts_by_op); i++) {   /* (an earlier setup's) */
        Py_CLEAR(facts_by_op[i].key);
    }
    Py_RETURN_NONE;
}

/* A dtype's stable hash and item size, computed once (dtypes are interned; the cache holds them). */
static int dtype_facts(PyObject *dtype, PyObject **hash, long *itemsize) {
    for (int i = 0; i < st.n_dtypes; i++)
        if (st.dtypes[i].dtype == dtype) {
            *hash = st.dtypes[i].hash;
            *itemsize = st.dtypes[i].itemsize;
            return 0;
        }
    PyObject *h = PyObject_CallOneArg(st.stable_hash, dtype);
    PyObject *size = h ? PyObject_GetAttrString(dtype, "itemsize") : NULL;
    long n = size ? PyLong_AsLong(size) : -1;
    Py_XDECREF(size);
    if (h == NULL || (n == -1 && PyErr_Occurred())) {
        Py_XDECREF(h);
        return -1;
    }
    if (st.n_dtypes < 64) {   /* the cache keeps the references */
        Py_INCREF(dtype);
        st.dtypes[st.n_dtypes].dtype = dtype;
        st.dtypes[st.n_dtypes].hash = h;
        st.dtypes[st.n_dtypes++].itemsize = n;
    } else {   /* (more dtypes than any program has: kept until the next one, still correct) */
        Py_XSETREF(st.spare_hash, h);
    }
    *hash = h;
    *itemsize = n;
    return 0;
}

/* Python's hashes, computed here without making objects (the anchors must be the ones stages.py
 * picks, and these are the hashes it takes; the tests compare both): hash(v) of an int, and
 * hash(t) of a tuple whose items hash to `lanes` (CPython's tuple hash, xxHash's round). */
#define MODULUS (((unsigned long long)1 << 61) - 1)

static Py_hash_t int_hash(long long v) {
    unsigned long long m = v < 0 ? (0ULL - (unsigned long long)v) % MODULUS : (unsigned long long)v % MODULUS;
    Py_hash_t h = v < 0 ? -(Py_hash_t)m : (Py_hash_t)m;
    return h == -1 ? -2 : h;
}

static Py_hash_t tuple_hash(const Py_hash_t *lanes, Py_ssize_t n) {
    const Py_uhash_t prime1 = 11400714785074694791ULL, prime2 = 14029467366897019727ULL,
                     prime5 = 2870177450012600261ULL;
    Py_uhash_t acc = prime5;
    for (Py_ssize_t i = 0; i < n; i++) {
        acc += (Py_uhash_t)lanes[i] * prime2;
        acc = (acc << 31) | (acc >> 33);
        acc *= prime1;
    }
    acc += (Py_uhash_t)n ^ (prime5 ^ 3527539UL);
    return acc == (Py_uhash_t)-1 ? 1546275796 : (Py_hash_t)acc;
}

/* stages.stable_hash(arg) (its value, not yet hashed as an int): None, ints, floats, Ops members and
 * tuples of them here, the rest by Python. */
static int stable_arg_hash(PyObject *arg, Py_hash_t *out) {
    if (arg == Py_None) {
        *out = 0;
        return 0;
    }
    if (PyLong_CheckExact(arg) || PyBool_Check(arg)) {
        *out = PyObject_Hash(arg);
        return *out == -1 ? -1 : 0;
    }
    if (PyFloat_CheckExact(arg)) {
        double x = PyFloat_AS_DOUBLE(arg);
        long long bits;
        memcpy(&bits, &x, sizeof bits);
        *out = x == x ? bits : 1;
        return 0;
    }
    if (PyTuple_CheckExact(arg)) {
        Py_ssize_t n = PyTuple_GET_SIZE(arg);
        Py_hash_t stack_lanes[8], *lanes = n <= 8 ? stack_lanes : PyMem_Malloc(n * sizeof(Py_hash_t));
        if (lanes == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        Py_ssize_t i;
        for (i = 0; i < n; i++) {   /* (a lane is hash(stable_hash(item)): an int's hash) */
            Py_hash_t h;
            if (stable_arg_hash(PyTuple_GET_ITEM(arg, i), &h) < 0) break;
            lanes[i] = int_hash(h);
        }
        if (i == n) *out = tuple_hash(lanes, n);
        if (lanes != stack_lanes) PyMem_Free(lanes);
        return i == n ? 0 : -1;
    }
    if (Py_TYPE(arg) == Py_TYPE(st.op_reduce)) {   /* an Ops member: its value's */
        long long v;
        if (op_value(arg, &v) < 0) return -1;
        *out = int_hash(v);   /* (stable_hash of an int: its hash) */
        return 0;
    }
    PyObject *h = PyObject_CallOneArg(st.stable_hash, arg);
    if (h == NULL) return -1;
    *out = PyLong_AsSsize_t(h);
    Py_DECREF(h);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

/* The number of elements of a shape (a tuple of ints), saturating at INT64_MAX, and hash(shape)
 * where `hash` is given. */
static int shape_facts(PyObject *shape, long long *size, Py_hash_t *hash) {
    long long n = 1;
    Py_ssize_t nd = PyTuple_GET_SIZE(shape);
    Py_hash_t stack_lanes[16], *lanes = nd <= 16 || hash == NULL ? stack_lanes : PyMem_Malloc(nd * sizeof(Py_hash_t));
    if (lanes == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < nd; i++) {
        long long d = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
        if (d == -1 && PyErr_Occurred()) {
            if (lanes != stack_lanes) PyMem_Free(lanes);
            return -1;
        }
        if (hash != NULL) lanes[i] = int_hash(d);
        if (__builtin_mul_overflow(n, d, &n)) n = INT64_MAX;
    }
    *size = n;
    if (hash != NULL) *hash = tuple_hash(lanes, nd);
    if (lanes != stack_lanes) PyMem_Free(lanes);
    return 0;
}

typedef struct {
    long long natural;
    PyObject *dev;   /* borrowed: a device the order's nodes (or the caller) keep alive */
    int level, doubt;
    int reduced;     /* a reduction reads it through elementwise and movement ops (stages.reduction_inputs) */
    int readers;     /* how many of the graph's nodes read it (a source twice: twice) */
    int summed;      /* a reduction reads it directly */
    int shared;      /* the values that read it, through movement ops (stages.read_apart) */
    int moved;       /* a movement op or a reduction reads it */
    int positional;  /* computed from positions and constants alone: in this many operations (0: not) */
} Info;

/* The own hash of n: hash((op.value, dtype's stable hash, shape, argument's hash)); its size. */
static int own_hash(Node *n, PyObject *shape, Py_hash_t *own, long *itemsize, long long *size) {
    long long value;
    PyObject *dh;
    Py_hash_t lanes[4];
    if (op_value(n->op, &value) < 0 || dtype_facts(n->dtype, &dh, itemsize) < 0 ||
        shape_facts(shape, size, &lanes[2]) < 0)
        return -1;
    lanes[0] = int_hash(value);
    lanes[1] = PyObject_Hash(dh);
    if (lanes[1] == -1) return -1;
    int lift = n->op == op_const ? is_liftable(n) : 0;
    if (lift < 0) return -1;
    Py_hash_t argh = 0;
    if (!(n->arg == Py_None || n->op == op_buffer || lift)) {
        int movement = op_in(n->op, IN_MOVEMENT);
        if (movement < 0) return -1;
        if (movement) {
            argh = PyObject_Hash(n->arg);
            if (argh == -1) return -1;
        } else if (stable_arg_hash(n->arg, &argh) < 0) {
            return -1;
        }
    }
    lanes[3] = int_hash(argh);
    *own = tuple_hash(lanes, 4);
    return 0;
}

/* The fingerprint of n down to k levels (stages.py_stage_anchors' `finger[k]`): its own hash, and
 * above a leaf (a node with a value, or no sources) and level 0, the hash of it with its sources'
 * fingerprints one level down. Computed for anchors alone (segment_ends reads theirs): at depth 3
 * a few dozen nodes each, where every node's took most of the pass. */
static int fingerprint(Node *n, int k, Py_hash_t *out) {
    PyObject *shape = n->op == st.op_call ? PyTuple_New(0) : node_get_shape(n, NULL);
    if (shape == NULL) return -1;
    Py_hash_t own;
    long itemsize;
    long long size;
    int rc = PyTuple_Check(shape) ? own_hash(n, shape, &own, &itemsize, &size) : -1;
    if (rc < 0 && !PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "stage_anchors: a node's shape is not a tuple");
    Py_DECREF(shape);
    if (rc < 0) return -1;
    Py_ssize_t ns = PyTuple_GET_SIZE(n->src);
    if (k == 0 || (n->view != NULL && n->view != Py_None) || ns == 0) {
        *out = own;
        return 0;
    }
    Py_hash_t stack_cols[9], *cols = ns <= 8 ? stack_cols : PyMem_Malloc((ns + 1) * sizeof(Py_hash_t));
    if (cols == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    cols[0] = int_hash(own);
    Py_ssize_t j;
    for (j = 0; j < ns; j++) {
        Py_hash_t h;
        if (fingerprint((Node *)PyTuple_GET_ITEM(n->src, j), k - 1, &h) < 0) break;
        cols[j + 1] = int_hash(h);
    }
    if (j == ns) *out = tuple_hash(cols, ns + 1);
    if (cols != stack_cols) PyMem_Free(cols);
    return j == ns ? 0 : -1;
}

/* The item size of n's dtype and the number of its elements (own_hash's, without the hashes). */
static int node_size(Node *n, PyObject *shape, long *itemsize, long long *size) {
    PyObject *dh;
    return dtype_facts(n->dtype, &dh, itemsize) < 0 ? -1 : shape_facts(shape, size, NULL);
}

/* One node's facts from its sources' (see stages.stage_anchors); appends it to anchors if it is one. */
static int visit(Node *n, Info *info, Py_ssize_t i, PyObject *skip, PyObject *device, PyObject *anchors) {
    Info *me = &info[i];
    int depth = st.depth;
    PyObject *shape = n->op == st.op_call ? PyTuple_New(0) : node_get_shape(n, NULL);
    if (shape == NULL) return -1;
    if (!PyTuple_Check(shape)) {
        Py_DECREF(shape);
        PyErr_SetString(PyExc_TypeError, "stage_anchors: a node's shape is not a tuple");
        return -1;
    }
    long itemsize;
    long long size;
    int rc = node_size(n, shape, &itemsize, &size);
    Py_DECREF(shape);
    if (rc < 0) return -1;
    Py_ssize_t ns = PyTuple_GET_SIZE(n->src);
    int leaf = (n->view != NULL && n->view != Py_None) || ns == 0;
    if (leaf) {
        PyObject *dev = NULL;
        if (n->op == op_buffer) {
            dev = PyObject_GetAttr(n->arg, str_device);
        } else if (n->view != NULL && n->view != Py_None) {
            dev = PyObject_CallOneArg(st.storage_device, n->view);
        }
        if ((n->op == op_buffer || (n->view != NULL && n->view != Py_None)) && dev == NULL) return -1;
        if (dev == Py_None || (dev != NULL && n->op != op_buffer && n->op != st.op_noop && dev != device))
            Py_CLEAR(dev);   /* (a value realized on another device: in doubt) */
        Py_XDECREF(dev);   /* borrowed from here on: the buffer (or view) the node holds keeps it */
        me->level = 0;
        me->natural = size;
        me->dev = dev;
        me->doubt = dev == NULL && n->view != NULL && n->view != Py_None;
        me->positional = n->view == NULL || n->view == Py_None ? op_in(n->op, IN_POSITIONS) : 0;
        return me->positional < 0 ? -1 : 0;
    }
    int level = 0, doubt = 0, positional = n->op != st.op_reduce;   /* (then: 1 + the sources' operations) */
    long long natural = 0;
    PyObject *dev = NULL;
    for (Py_ssize_t j = 0; j < ns; j++) {
        Node *s = (Node *)PyTuple_GET_ITEM(n->src, j);
        if (s->walk != walks || s->position >= i) {
            PyErr_SetString(PyExc_RuntimeError, "stage_anchors: a source not met before its user");
            return -1;
        }
        Info *b = &info[s->position];
        if (j == 0 || b->level > level) level = b->level;
        if (j == 0 || b->natural > natural) natural = b->natural;
        if (dev == NULL) dev = b->dev;
        doubt |= b->doubt;
        if (positional) positional = b->positional ? positional + b->positional : 0;
        if (positional > st.positional_nodes + 1) positional = 0;
    }
    if (positional > st.positional_nodes) positional = 0;
    if (n->op == st.op_copy) dev = n->arg;
    doubt = doubt && dev == NULL;
    int own_size = op_in(n->op, IN_OWN_SIZE);
    int not_value = own_size < 0 ? -1 : op_in(n->op, IN_NOT_VALUES);
    if (not_value < 0) return -1;
    if (own_size) natural = size;
    else if (n->op == st.op_shrink && size < natural) natural = size;
    int step = !not_value;
    level += step;
    if (step && itemsize && 0 < size && (size <= natural || !me->reduced) && !(me->summed && me->readers == 1) &&
        !doubt && !positional &&
        (level >= st.max_levels || (me->shared >= 2 && me->moved))) {
        int root = PySet_Contains(skip, (PyObject *)n);
        if (root < 0) return -1;
        if (!root) {
            Py_hash_t h;
            if (fingerprint(n, depth, &h) < 0) return -1;
            PyObject *finger = PyLong_FromSsize_t(h);
            PyObject *entry = finger ? PyTuple_Pack(3, (PyObject *)n, dev ? dev : device, finger) : NULL;
            Py_XDECREF(finger);
            if (entry == NULL || PyList_Append(anchors, entry) < 0) {
                Py_XDECREF(entry);
                return -1;
            }
            Py_DECREF(entry);
            level = 0;
            if (dev == NULL) dev = device;
        }
    }
    me->level = level;
    me->natural = natural;
    me->dev = dev;
    me->doubt = doubt;
    me->positional = positional;
    return 0;
}

/* The nodes under root, sources first, in toposort_of's order with stop_at_views (a node whose
 * value is computed is a leaf), each marked with walk `id` and its position in the list: the marks
 * say what was met, where toposort_of keeps a set. */
static PyObject *marked_order(Node *root, unsigned long id) {
    PyObject *order = PyList_New(0);
    Py_ssize_t cap = 64, sp = 0;
    Frame *stack = PyMem_Malloc(cap * sizeof(Frame));
    if (order == NULL || stack == NULL) {
        if (stack == NULL) PyErr_NoMemory();
        goto error;
    }
    root->walk = id;
    stack[sp++] = (Frame){root, 0};
    while (sp > 0) {
        Frame *f = &stack[sp - 1];
        Node *n = f->node;
        Py_ssize_t ns = n->view != NULL && n->view != Py_None ? 0 : PyTuple_GET_SIZE(n->src);
        Node *next = NULL;
        while (f->child < ns) {
            Node *c = (Node *)PyTuple_GET_ITEM(n->src, f->child++);
            if (c->walk != id) {
                next = c;
                break;
            }
        }
        if (next != NULL) {
            next->walk = id;
            if (push(&stack, &cap, &sp, next) < 0) goto error;
            stack[sp - 1].child = 0;
            continue;
        }
        n->position = PyList_GET_SIZE(order);
        if (PyList_Append(order, (PyObject *)n) < 0) goto error;
        sp--;
    }
    PyMem_Free(stack);
    return order;
error:
    PyMem_Free(stack);
    Py_XDECREF(order);
    return NULL;
}

/* stage_anchors(sink, device): the anchors of the graph under sink's sources, with their devices and
 * fingerprints (stages.stage_anchors). */
static PyObject *stage_anchors(PyObject *module, PyObject *args) {
    PyObject *sink, *device;
    if (!PyArg_ParseTuple(args, "O!O:stage_anchors", &NodeType, &sink, &device)) return NULL;
    if (st.stable_hash == NULL || liftable == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "uop_native.setup_stages() was not called");
        return NULL;
    }
    if (walking) {
        PyErr_SetString(PyExc_RuntimeError, "stage_anchors: called during a walk");
        return NULL;
    }
    unsigned long id = ++walks;   /* the marks of this pass (the callbacks it makes do not walk) */
    PyObject *order = marked_order((Node *)sink, id);
    if (order == NULL) return NULL;
    walking = 1;
    Py_ssize_t count = PyList_GET_SIZE(order) - 1;   /* (the sink last) */
    PyObject *skip = PySet_New(((Node *)sink)->src), *anchors = PyList_New(0);
    Info *info = PyMem_Malloc((count > 0 ? count : 1) * sizeof(Info));
    PyObject *result = NULL;
    if (skip == NULL || anchors == NULL || info == NULL) {
        if (info == NULL) PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t i;
    for (i = 0; i < count; i++) info[i].reduced = info[i].readers = info[i].summed = info[i].shared = info[i].moved = 0;
    for (i = count - 1; i >= 0; i--) {   /* stages.reduction_inputs, summed_once, read_apart */
        Node *n = (Node *)PyList_GET_ITEM(order, i);
        if ((n->view != NULL && n->view != Py_None) || PyTuple_GET_SIZE(n->src) == 0) continue;
        int passes = n->op == st.op_reduce;
        int movement = op_in(n->op, IN_MOVEMENT);
        if (movement < 0) break;
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(n->src); j++) {
            PyObject *src = PyTuple_GET_ITEM(n->src, j);
            Info *s = &info[((Node *)src)->position];
            s->readers++;
            s->summed |= passes;
            s->moved |= passes | movement;
            int again = 0;   /* (a source read twice by one node: one reader) */
            for (Py_ssize_t k = 0; k < j && !again; k++) again = PyTuple_GET_ITEM(n->src, k) == src;
            if (!again) s->shared += movement ? info[i].shared : 1;
        }
        if (!passes && info[i].reduced && (passes = op_in(n->op, IN_PASS_TO_REDUCTION)) < 0) break;
        for (Py_ssize_t j = 0; passes && j < PyTuple_GET_SIZE(n->src); j++)
            info[((Node *)PyTuple_GET_ITEM(n->src, j))->position].reduced = 1;
    }
    if (i < 0)
        for (i = 0; i < count; i++)
            if (visit((Node *)PyList_GET_ITEM(order, i), info, i, skip, device, anchors) < 0) break;
    walking = 0;
    if (i == count) {
        result = anchors;
        anchors = NULL;
    }
done:
    walking = 0;
    PyMem_Free(info);
    Py_XDECREF(skip);
    Py_XDECREF(anchors);
    Py_DECREF(order);
    return result;
}
