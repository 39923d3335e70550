/* Recording the commonest array operations in C: elementwise.fast_operator's and fast_recorded's
 * case, `x (op) c` for an array x of a float dtype and a Python float or int c (of an integer dtype
 * and a Python int, where `ints`), and `x (op) y` for two arrays of one dtype and device (broadcast
 * as the Python path does); unary functions, reductions and matmul below. A loop
 * records dozens of these an iteration; in Python each costs about a microsecond, most of it the
 * calls that find the constant and make the array.
 *
 * record_binary(x, other, op, reflected, ints[, result]) builds the node the Python path builds
 * (of dtype `result` where given and not None: a comparison's bool; of the operands' otherwise; the constant
 * from graph.const's memo, or graph.const itself; the node's shape set) and the array as
 * Array._from_uop makes it (of class Array.made, holding the node, recorded as its holder), or
 * returns NotImplemented for anything else (other operands, other dtypes, broadcasting, no_grad()),
 * which the caller takes to the Python path.
 *
 * record_unary(x, op, kinds): the node (op, x's dtype, (x's node,)) and its array, for x of a dtype
 * whose kind letter is in `kinds` (negative, abs, sin, exp... of a float array); NotImplemented else.
 *
 * record_reduce(x, op, axis, keepdims[, as_array]): statistics._reduce_uop's node (the REDUCE_AXIS
 * over the sorted axes, reshaped without them unless keepdims) for a float array of no empty axis and
 * an axis of None, an int or a tuple of ints in range and not repeated; NotImplemented else. With
 * as_array, the array of that node (as statistics.reduce makes it; NotImplemented under no_grad()).
 *
 * record_matmul(x1, x2): linear_algebra.matmul's nodes for two arrays of one real (not bool) dtype
 * and device, each a vector or a matrix, of no empty axis; NotImplemented for anything else.
 *
 * record_index(x, i): indexing.getitem_int's nodes (the SHRINK to row i, unless the first axis has
 * length 1, and the RESHAPE without that axis) and their array, for an array x of at least one
 * axis and a Python int i in range; NotImplemented else (the Python path raises the IndexError).
 *
 * record_rolled(u, a, s, mask): manipulation._rolled's nodes, node u rolled by 0 < s < n along
 * its axis a of length n, `mask` the positions from s on (a game of life rolls its board sixteen
 * times a generation).
 * Compiled after uop_native.c, as one file with it. */

static struct {
    PyObject *array;           /* arrays.Array: its `made` is the class of the arrays made */
    Py_ssize_t uop, device, leaf_grad, grad, released, viewof, views;   /* Array's slots' offsets */
    PyObject *grad_mode;       /* arrays.grad_mode: `disabled` > 0 inside no_grad() */
    PyObject *consts;          /* graph._consts: (type, value, id(dtype), shape) -> constant node */
    PyObject *const_fn;        /* graph.const */
    PyObject *check_fits;      /* dtypes.check_scalar_fits */
    PyTypeObject *uop_type;    /* uop.UOp */
    PyObject *reshape, *expand, *mul, *reduce, *add, *shrink, *pad, *where;   /* Ops.RESHAPE, ..., PAD, WHERE */
    PyObject *str_made, *str_disabled, *str_kind, *str_itemsize, *str_dtype;
} rec;

#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

/* The offset of slot `name` of class `cls` (its member descriptor's). */
static int slot_offset(PyObject *cls, const char *name, Py_ssize_t *off) {
    PyObject *d = PyDict_GetItemString(((PyTypeObject *)cls)->tp_dict, name);
    if (d == NULL || !PyObject_TypeCheck(d, &PyMemberDescr_Type)) {
        PyErr_Format(PyExc_TypeError, "setup_record: %s is not a slot of the array class", name);
        return -1;
    }
    *off = ((PyMemberDescrObject *)d)->d_member->offset;
    return 0;
}

/* setup_record(Array, grad_mode, consts, const, check_scalar_fits, UOp,
 *              (RESHAPE, EXPAND, MUL, REDUCE_AXIS, ADD, SHRINK, PAD, WHERE)) */
static PyObject *setup_record(PyObject *module, PyObject *args) {
    PyObject *array, *grad_mode, *consts, *const_fn, *check_fits, *uop_type;
    if (!PyArg_ParseTuple(args, "O!OO!OOO!(OOOOOOOO):setup_record", &PyType_Type, &array, &grad_mode, &PyDict_Type,
                          &consts, &const_fn, &check_fits, &PyType_Type, &uop_type, &rec.reshape, &rec.expand,
                          &rec.mul, &rec.reduce, &rec.add, &rec.shrink, &rec.pad, &rec.where))
        return NULL;
    PyObject *ops[] = {rec.reshape, rec.expand, rec.mul, rec.reduce, rec.add, rec.shrink, rec.pad, rec.where};
    for (int i = 0; i < 8; i++) Py_INCREF(ops[i]);   /* (enum members: never freed, the references kept) */
    if (!PyType_IsSubtype((PyTypeObject *)uop_type, &NodeType)) {
        PyErr_SetString(PyExc_TypeError, "setup_record: UOp must be a Node type");
        return NULL;
    }
    if (slot_offset(array, "_uop", &rec.uop) < 0 || slot_offset(array, "device", &rec.device) < 0 ||
        slot_offset(array, "_leaf_grad", &rec.leaf_grad) < 0 || slot_offset(array, "grad", &rec.grad) < 0 ||
        slot_offset(array, "_released", &rec.released) < 0 || slot_offset(array, "_viewof", &rec.viewof) < 0 ||
        slot_offset(array, "_views", &rec.views) < 0)
        return NULL;
    if (rec.str_made == NULL) {
        rec.str_made = PyUnicode_InternFromString("made");
        rec.str_disabled = PyUnicode_InternFromString("disabled");
        rec.str_kind = PyUnicode_InternFromString("kind");
        rec.str_itemsize = PyUnicode_InternFromString("itemsize");
        rec.str_dtype = PyUnicode_InternFromString("dtype");
        if (rec.str_made == NULL || rec.str_disabled == NULL || rec.str_kind == NULL || rec.str_itemsize == NULL ||
            rec.str_dtype == NULL)
            return NULL;
    }
    PyObject *keep[] = {array, grad_mode, consts, const_fn, check_fits, uop_type};
    for (int i = 0; i < 6; i++) Py_INCREF(keep[i]);
    Py_XSETREF(rec.array, array);
    Py_XSETREF(rec.grad_mode, grad_mode);
    Py_XSETREF(rec.consts, consts);
    Py_XSETREF(rec.const_fn, const_fn);
    Py_XSETREF(rec.check_fits, check_fits);
    Py_XSETREF(rec.uop_type, (PyTypeObject *)uop_type);
    Py_RETURN_NONE;
}

static PyObject *shaped_node(PyObject *op, PyObject *dtype, PyObject *src, PyObject *arg, PyObject *shape);
static PyObject *moved(PyObject *u, PyObject *shape, int expand);

/* The constants met last, by (value's type and bits, dtype, shape object): a loop's scalars come
 * back every step, and building graph.const's key and hashing it costs most of a lookup there.
 * Each entry holds its node. */
#define RECENT 64
static struct {
    int is_float;
    long long bits;
    PyObject *dtype, *shape, *node;
} recent[RECENT];

/* graph.const's nodes, built here, for a float32 or float64 dtype, or an integer dtype and a
 * Python int that check_scalar_fits let through (whose value is then the int itself); NULL without
 * an error for any other (float16: the call). A new reference. */
static PyObject *build_constant(PyObject *value, PyObject *dtype, PyObject *shape, Py_UCS4 kind) {
    PyObject *arg;
    if (kind == 'f') {
        PyObject *size = PyObject_GetAttr(dtype, rec.str_itemsize);
        long itemsize = size ? PyLong_AsLong(size) : -1;
        Py_XDECREF(size);
        double d = itemsize == 4 || itemsize == 8 ? PyFloat_AsDouble(value) : -1.0;
        if (PyErr_Occurred() || (itemsize != 4 && itemsize != 8)) {   /* (an int too large: the call raises) */
            PyErr_Clear();
            return NULL;
        }
        arg = PyFloat_FromDouble(itemsize == 4 ? (double)(float)d : d);   /* (dtypes.python_value's rounding) */
    } else if ((kind == 'i' || kind == 'u') && PyLong_CheckExact(value)) {
        arg = Py_NewRef(value);
    } else {
        return NULL;
    }
    PyObject *scalar = PyTuple_New(0);
    PyObject *c = arg && scalar ? shaped_node(op_const, dtype, PyTuple_New(0), arg, scalar) : NULL;
    Py_XDECREF(arg);
    Py_XDECREF(scalar);
    Py_ssize_t n = PyTuple_GET_SIZE(shape);
    if (c == NULL || n == 0) return c;
    PyObject *ones = PyTuple_New(n);
    for (Py_ssize_t i = 0; ones != NULL && i < n; i++) PyTuple_SET_ITEM(ones, i, PyLong_FromLong(1));
    PyObject *u = ones ? shaped_node(rec.reshape, dtype, PyTuple_Pack(1, c), ones, ones) : NULL;
    Py_DECREF(c);
    if (u != NULL) {   /* (moved(): u itself where the shape is all ones) */
        PyObject *e = moved(u, shape, 1);
        Py_DECREF(u);
        u = e;
    }
    Py_XDECREF(ones);
    return u;
}

/* graph.const(value, dtype, shape): from `recent`, or from graph.const's memo where the value has
 * an entry there (the key graph.const makes; zeros and NaN take the call), else built here
 * (build_constant), else the call. A new reference. */
static PyObject *constant(PyObject *value, PyObject *dtype, PyObject *shape, Py_UCS4 kind) {
    int is_float = PyFloat_CheckExact(value), overflow = 0;
    double v = is_float ? PyFloat_AS_DOUBLE(value) : 1.0;
    long long bits = 0;
    if (is_float) memcpy(&bits, &v, sizeof bits);
    else bits = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (bits == -1 && !is_float && PyErr_Occurred()) return NULL;
    size_t slot = ((unsigned long long)bits * 0x9E3779B97F4A7C15ULL ^ (size_t)dtype ^ (size_t)shape >> 4) % RECENT;
    int cacheable = !overflow && v != 0.0 && v == v;
    if (cacheable && recent[slot].node != NULL && recent[slot].bits == bits && recent[slot].is_float == is_float &&
        recent[slot].dtype == dtype && recent[slot].shape == shape) {
        Py_INCREF(recent[slot].node);
        return recent[slot].node;
    }
    PyObject *c = NULL;
    if (v != 0.0 && v == v) {
        PyObject *id = PyLong_FromVoidPtr(dtype);
        PyObject *key = id ? PyTuple_Pack(4, (PyObject *)Py_TYPE(value), value, id, shape) : NULL;
        Py_XDECREF(id);
        if (key == NULL) return NULL;
        c = PyDict_GetItemWithError(rec.consts, key);
        Py_DECREF(key);
        Py_XINCREF(c);
        if (c == NULL && PyErr_Occurred()) return NULL;
    }
    if (c == NULL) c = build_constant(value, dtype, shape, kind);
    if (c == NULL && !PyErr_Occurred()) c = PyObject_CallFunctionObjArgs(rec.const_fn, value, dtype, shape, NULL);
    if (c != NULL && cacheable) {   /* (the shape object is held: its address stays its own) */
        Py_INCREF(c);
        Py_INCREF(dtype);
        Py_INCREF(shape);
        Py_XSETREF(recent[slot].node, c);
        Py_XSETREF(recent[slot].dtype, dtype);
        Py_XSETREF(recent[slot].shape, shape);
        recent[slot].bits = bits;
        recent[slot].is_float = is_float;
    }
    return c;
}

/* The array of node n on `device`, as Array._from_uop makes it. Steals n. */
static PyObject *make_array(PyObject *n, PyObject *device) {
    PyObject *made = PyObject_GetAttr(rec.array, rec.str_made);
    if (made == NULL) {
        Py_DECREF(n);
        return NULL;
    }
    if (!PyType_Check(made)) {
        Py_DECREF(made);
        Py_DECREF(n);
        PyErr_SetString(PyExc_TypeError, "Array.made is not a class");
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)made;
    PyObject *t = type->tp_alloc(type, 0);
    Py_DECREF(made);
    if (t == NULL) {
        Py_DECREF(n);
        return NULL;
    }
    SLOT(t, rec.uop) = n;   /* (the reference given) */
    SLOT(t, rec.device) = Py_NewRef(device);
    SLOT(t, rec.leaf_grad) = Py_NewRef(Py_False);
    SLOT(t, rec.grad) = Py_NewRef(Py_None);
    SLOT(t, rec.released) = Py_NewRef(Py_False);
    SLOT(t, rec.viewof) = Py_NewRef(Py_None);
    SLOT(t, rec.views) = Py_NewRef(Py_None);
    /* hold(t), as _from_uop: unless a live array other than t holds the node already */
    Node *node = (Node *)n;
    PyObject *ref = node->holder, *other = NULL;
    if (ref != NULL && PyWeakref_Check(ref)) {
        other = PyWeakref_GetObject(ref);   /* borrowed; Py_None when dead */
        if (other != Py_None && PyObject_TypeCheck(other, (PyTypeObject *)rec.array) && SLOT(other, rec.uop) == n)
            return t;
    }
    PyObject *weak = PyWeakref_NewRef(t, NULL);
    if (weak == NULL || node_set_cache(node, weak, (void *)offsetof(Node, holder)) < 0) {
        Py_XDECREF(weak);
        Py_DECREF(t);
        return NULL;
    }
    Py_DECREF(weak);
    return t;
}

/* The shape two shapes broadcast to (graph.broadcast_shapes), or NULL without an error where they
 * do not (or with one). */
static PyObject *broadcast(PyObject *sa, PyObject *sb) {
    Py_ssize_t na = PyTuple_GET_SIZE(sa), nb = PyTuple_GET_SIZE(sb), n = na > nb ? na : nb;
    PyObject *out = PyTuple_New(n);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pa = i >= n - na ? PyTuple_GET_ITEM(sa, i - (n - na)) : NULL;
        PyObject *pb = i >= n - nb ? PyTuple_GET_ITEM(sb, i - (n - nb)) : NULL;
        Py_ssize_t da = pa ? PyLong_AsSsize_t(pa) : 1, db = pb ? PyLong_AsSsize_t(pb) : 1;
        if ((da == -1 || db == -1) && PyErr_Occurred()) {
            Py_DECREF(out);
            return NULL;
        }
        PyObject *d = da == db || db == 1 ? (pa ? pa : pb) : da == 1 ? pb : NULL;
        if (d == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        Py_INCREF(d);
        PyTuple_SET_ITEM(out, i, d);
    }
    return out;
}

/* graph.expand_uop(u, shape): leading axes of length 1 added, then axes of length 1 stretched. */
static PyObject *expand_to(PyObject *u, PyObject *shape) {
    PyObject *now = node_get_shape((Node *)u, NULL);
    if (now == NULL) return NULL;
    Py_ssize_t missing = PyTuple_GET_SIZE(shape) - PyTuple_GET_SIZE(now);
    PyObject *r = u;
    Py_INCREF(r);
    if (missing > 0) {
        PyObject *longer = PyTuple_New(PyTuple_GET_SIZE(shape));
        for (Py_ssize_t i = 0; longer != NULL && i < PyTuple_GET_SIZE(shape); i++) {
            PyObject *d = i < missing ? PyLong_FromLong(1) : PyTuple_GET_ITEM(now, i - missing);
            if (i >= missing) Py_INCREF(d);
            if (d == NULL) Py_CLEAR(longer);
            else PyTuple_SET_ITEM(longer, i, d);
        }
        Py_DECREF(r);
        r = longer ? moved(u, longer, 0) : NULL;
        Py_XDECREF(longer);
    }
    Py_DECREF(now);
    if (r == NULL) return NULL;
    PyObject *e = moved(r, shape, 1);
    Py_DECREF(r);
    return e;
}

/* Whether x is an array this file records for (1; 0: NotImplemented; -1: an error): its node,
 * device and dtype kind's letter, and, where `grads`, that no_grad() is off (the Python path adds
 * its DETACH there). */
static int operand(PyObject *x, int grads, PyObject **u, PyObject **device, Py_UCS4 *kind) {
    if (rec.array == NULL || !PyObject_TypeCheck(x, (PyTypeObject *)rec.array)) return 0;
    *u = SLOT(x, rec.uop);
    *device = SLOT(x, rec.device);
    if (*u == NULL || *device == NULL || !PyObject_TypeCheck(*u, &NodeType)) return 0;
    if (grads) {
        PyObject *disabled = PyObject_GetAttr(rec.grad_mode, rec.str_disabled);
        if (disabled == NULL) return -1;
        int off = PyObject_IsTrue(disabled);
        Py_DECREF(disabled);
        if (off != 0) return off < 0 ? -1 : 0;
    }
    PyObject *k = PyObject_GetAttr(((Node *)*u)->dtype, rec.str_kind);
    if (k == NULL) return -1;
    *kind = PyUnicode_Check(k) && PyUnicode_GET_LENGTH(k) == 1 ? PyUnicode_READ_CHAR(k, 0) : 0;
    Py_DECREF(k);
    return 1;
}

/* record_binary(x, other, op, reflected, ints[, result dtype]): see the top of this file. */
static PyObject *record_binary(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5 && nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "record_binary takes 5 or 6 arguments");
        return NULL;
    }
    PyObject *x = args[0], *other = args[1], *op = args[2], *result = nargs == 6 && args[5] != Py_None ? args[5] : NULL;
    int reflected = PyObject_IsTrue(args[3]), ints = PyObject_IsTrue(args[4]);
    if (reflected < 0 || ints < 0) return NULL;
    PyObject *u, *device;
    Py_UCS4 kind;
    int usable = operand(x, 1, &u, &device, &kind);
    if (usable <= 0) {
        if (usable < 0) return NULL;
        Py_RETURN_NOTIMPLEMENTED;
    }
    PyObject *dtype = ((Node *)u)->dtype;
    int is_float = kind == 'f', is_int = (kind == 'i' || kind == 'u') && ints;
    PyObject *second;   /* the other source: the constant, or the other array's node */
    PyObject *owned = NULL;   /* x's node broadcast, where it is (u is then this reference) */
    PyObject *shape = node_get_shape((Node *)u, NULL);
    if (shape == NULL) return NULL;
    PyTypeObject *t = Py_TYPE(other);
    if ((is_float && (t == &PyFloat_Type || t == &PyLong_Type)) || (is_int && t == &PyLong_Type)) {
        if (!is_float) {
            PyObject *ok = PyObject_CallFunctionObjArgs(rec.check_fits, other, dtype, NULL);
            if (ok == NULL) {
                Py_DECREF(shape);
                return NULL;
            }
            Py_DECREF(ok);
        }
        second = constant(other, dtype, shape, kind);
        if (second == NULL) {
            Py_DECREF(shape);
            return NULL;
        }
    } else if ((is_float || is_int) && PyObject_TypeCheck(other, (PyTypeObject *)rec.array)) {
        PyObject *v = SLOT(other, rec.uop);
        PyObject *made = PyObject_GetAttr(rec.array, rec.str_made);
        if (made == NULL) {
            Py_DECREF(shape);
            return NULL;
        }
        int same = (PyObject *)t == made && v != NULL && PyObject_TypeCheck(v, &NodeType) &&
                   ((Node *)v)->dtype == dtype && SLOT(other, rec.device) == device;
        Py_DECREF(made);
        PyObject *vshape = same ? node_get_shape((Node *)v, NULL) : NULL;
        if (same && vshape == NULL) {
            Py_DECREF(shape);
            return NULL;
        }
        int equal = same ? PyObject_RichCompareBool(shape, vshape, Py_EQ) : 0;
        if (equal < 0 || !same) {
            Py_DECREF(shape);
            Py_XDECREF(vshape);
            if (equal < 0) return NULL;
            Py_RETURN_NOTIMPLEMENTED;
        }
        if (equal) {
            Py_DECREF(vshape);
            Py_INCREF(v);
            second = v;
        } else {   /* a bias, a 0-d array, a row's mean: both broadcast, as the Python path does */
            PyObject *both = broadcast(shape, vshape);
            Py_DECREF(vshape);
            Py_DECREF(shape);
            if (both == NULL) {
                if (PyErr_Occurred()) return NULL;
                Py_RETURN_NOTIMPLEMENTED;   /* (shapes that do not broadcast: the Python path's error) */
            }
            shape = both;
            owned = u = expand_to(u, shape);
            second = u ? expand_to(v, shape) : NULL;
            if (second == NULL) {
                Py_XDECREF(owned);
                Py_DECREF(shape);
                return NULL;
            }
        }
    } else {
        Py_DECREF(shape);
        Py_RETURN_NOTIMPLEMENTED;
    }
    PyObject *src = reflected ? PyTuple_Pack(2, second, u) : PyTuple_Pack(2, u, second);
    Py_DECREF(second);
    Py_XDECREF(owned);
    PyObject *n = shaped_node(op, result ? result : dtype, src, Py_None, shape);
    Py_DECREF(shape);
    return n ? make_array(n, device) : NULL;
}

/* The node (op, dtype, src, arg) with its shape `shape` set where it has none; steals src. */
static PyObject *shaped_node(PyObject *op, PyObject *dtype, PyObject *src, PyObject *arg, PyObject *shape) {
    if (src == NULL) return NULL;
    PyObject *n = make_node(rec.uop_type, op, dtype, src, arg);   /* (takes src) */
    if (n == NULL) return NULL;
    Node *node = (Node *)n;
    if ((node->shape == NULL || node->shape == Py_None) &&
        node_set_cache(node, shape, (void *)offsetof(Node, shape)) < 0) {
        Py_DECREF(n);
        return NULL;
    }
    return n;
}

/* graph.reshape_uop(u, shape) (u itself where its shape is `shape`), or expand_uop where `expand`
 * (shape of u's length, its axes of length 1 stretched). A new reference. */
static PyObject *moved(PyObject *u, PyObject *shape, int expand) {
    PyObject *now = node_get_shape((Node *)u, NULL);
    if (now == NULL) return NULL;
    int same = PyObject_RichCompareBool(now, shape, Py_EQ);
    Py_DECREF(now);
    if (same < 0) return NULL;
    if (same) {
        Py_INCREF(u);
        return u;
    }
    return shaped_node(expand ? rec.expand : rec.reshape, ((Node *)u)->dtype, PyTuple_Pack(1, u), shape, shape);
}

/* A tuple of the n ints given (a shape). */
static PyObject *shape_of_ints(int n, Py_ssize_t a, Py_ssize_t b, Py_ssize_t c) {
    Py_ssize_t v[3] = {a, b, c};
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t != NULL && i < n; i++) {
        PyObject *x = PyLong_FromSsize_t(v[i]);
        if (x == NULL) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

/* record_matmul(x1, x2): see the top of this file. */
static PyObject *record_matmul(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "record_matmul takes 2 arguments");
        return NULL;
    }
    PyObject *x = args[0], *y = args[1], *a, *b, *device, *device_b;
    Py_UCS4 kind, kind_b;
    int usable = operand(x, 1, &a, &device, &kind);
    if (usable > 0) usable = operand(y, 0, &b, &device_b, &kind_b);
    if (usable < 0) return NULL;
    if (!usable || device_b != device || ((Node *)a)->dtype != ((Node *)b)->dtype ||
        (kind != 'f' && kind != 'i' && kind != 'u'))
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *dtype = ((Node *)a)->dtype;
    PyObject *sa = node_get_shape((Node *)a, NULL), *sb = sa ? node_get_shape((Node *)b, NULL) : NULL;
    if (sb == NULL) {
        Py_XDECREF(sa);
        return NULL;
    }
    Py_ssize_t la = PyTuple_GET_SIZE(sa), lb = PyTuple_GET_SIZE(sb), dims[4] = {0, 0, 0, 0};
    int plain = la >= 1 && la <= 2 && lb >= 1 && lb <= 2;
    for (Py_ssize_t i = 0; plain && i < la; i++) dims[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(sa, i));
    for (Py_ssize_t i = 0; plain && i < lb; i++) dims[2 + i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(sb, i));
    Py_DECREF(sa);
    Py_DECREF(sb);
    if (PyErr_Occurred()) return NULL;
    /* (n, k) @ (k, m): a vector is a row on the left, a column on the right */
    Py_ssize_t n = la == 2 ? dims[0] : 1, k = la == 2 ? dims[1] : dims[0];
    Py_ssize_t k2 = dims[2], m = lb == 2 ? dims[3] : 1;
    if (!plain || k != k2 || n <= 0 || k <= 0 || m <= 0) Py_RETURN_NOTIMPLEMENTED;   /* (errors: the Python path's) */
    if (kind == 'f' && n >= 256 && k >= 2048) Py_RETURN_NOTIMPLEMENTED;   /* maybe packed (linear_algebra._packs) */
    if (kind == 'f' && n >= 64 && m >= 64) {   /* maybe tiled on a GPU (gpu_matmul.applies, MIN_SIDE >= 64) */
        PyObject *host = PyObject_GetAttrString(device, "host_memory");
        int on_host = host == NULL ? -1 : PyObject_IsTrue(host);
        Py_XDECREF(host);
        if (on_host < 0) return NULL;
        if (!on_host) Py_RETURN_NOTIMPLEMENTED;
    }
    PyObject *pa = NULL, *pb = NULL, *prod = NULL, *out = NULL, *result = NULL;
    PyObject *full = shape_of_ints(3, n, k, m), *sa3 = shape_of_ints(3, n, k, 1), *sb3 = shape_of_ints(3, 1, k, m);
    PyObject *reduced = shape_of_ints(3, n, 1, m);
    PyObject *shape = la == 2 && lb == 2 ? shape_of_ints(2, n, m, 0) : la == 2 ? shape_of_ints(1, n, 0, 0) :
                      lb == 2 ? shape_of_ints(1, m, 0, 0) : PyTuple_New(0);
    PyObject *axes = Py_BuildValue("(O(i))", rec.add, 1);   /* (the sum over k: axis 1 of (n, k, m)) */
    if (!full || !sa3 || !sb3 || !reduced || !shape || !axes)
        goto done;
    /* (a vector goes straight to its 3-d shape, and the sum straight to the result's: one reshape,
     * not two, of values no array holds; a loop of matrix-vector products records ~25% fewer nodes) */
    PyObject *ra = moved(a, sa3, 0);
    pa = ra ? moved(ra, full, 1) : NULL;
    Py_XDECREF(ra);
    PyObject *rb = pa ? moved(b, sb3, 0) : NULL;
    pb = rb ? moved(rb, full, 1) : NULL;
    Py_XDECREF(rb);
    prod = pb ? shaped_node(rec.mul, dtype, PyTuple_Pack(2, pa, pb), Py_None, full) : NULL;
    PyObject *sum = prod ? shaped_node(rec.reduce, dtype, PyTuple_Pack(1, prod), axes, reduced) : NULL;
    out = sum ? moved(sum, shape, 0) : NULL;
    Py_XDECREF(sum);
    if (out != NULL) {
        result = make_array(out, device);
        out = NULL;   /* (stolen) */
    }
done:
    Py_XDECREF(full);
    Py_XDECREF(sa3);
    Py_XDECREF(sb3);
    Py_XDECREF(reduced);
    Py_XDECREF(shape);
    Py_XDECREF(axes);
    Py_XDECREF(pa);
    Py_XDECREF(pb);
    Py_XDECREF(prod);
    return result;
}

/* record_unary(x, op, kinds): see the top of this file. */
static PyObject *record_unary(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyUnicode_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "record_unary(x, op, kinds: str)");
        return NULL;
    }
    PyObject *x = args[0], *op = args[1], *u, *device;
    Py_UCS4 kind;
    int usable = operand(x, 1, &u, &device, &kind);
    if (usable < 0) return NULL;
    if (!usable || !kind || PyUnicode_FindChar(args[2], kind, 0, PyUnicode_GET_LENGTH(args[2]), 1) < 0)
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *dtype = ((Node *)u)->dtype;
    PyObject *shape = node_get_shape((Node *)u, NULL);
    if (shape == NULL) return NULL;
    PyObject *n = shaped_node(op, dtype, PyTuple_Pack(1, u), Py_None, shape);
    Py_DECREF(shape);
    return n ? make_array(n, device) : NULL;
}

/* record_reduce(x, op, axis, keepdims[, as_array]): see the top of this file. */
static PyObject *record_reduce(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 && nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "record_reduce takes 4 or 5 arguments");
        return NULL;
    }
    PyObject *x = args[0], *op = args[1], *axis = args[2];
    int keepdims = PyObject_IsTrue(args[3]), as_array = nargs == 5 ? PyObject_IsTrue(args[4]) : 0;
    if (keepdims < 0 || as_array < 0) return NULL;
    PyObject *u, *device;
    Py_UCS4 kind;
    int usable = operand(x, as_array, &u, &device, &kind);   /* (a node alone: the caller makes the array) */
    if (usable < 0) return NULL;
    if (!usable || kind != 'f') Py_RETURN_NOTIMPLEMENTED;
    PyObject *dtype = ((Node *)u)->dtype;
    PyObject *shape = node_get_shape((Node *)u, NULL);
    if (shape == NULL) return NULL;
    Py_ssize_t ndim = PyTuple_GET_SIZE(shape);
    char reduced[64] = {0};
    int plain = ndim <= 64;
    for (Py_ssize_t i = 0; plain && i < ndim; i++) {
        Py_ssize_t d = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
        if (d <= 0) plain = 0;   /* (an empty axis, or an error: the Python path) */
    }
    PyErr_Clear();
    Py_ssize_t count = 0;
    if (plain && axis == Py_None) {
        for (Py_ssize_t i = 0; i < ndim; i++) reduced[i] = 1;
        count = ndim;
    } else if (plain) {
        Py_ssize_t n = PyTuple_CheckExact(axis) ? PyTuple_GET_SIZE(axis) : 1;
        for (Py_ssize_t j = 0; plain && j < n; j++) {
            PyObject *a = PyTuple_CheckExact(axis) ? PyTuple_GET_ITEM(axis, j) : axis;
            Py_ssize_t i = PyLong_CheckExact(a) ? PyLong_AsSsize_t(a) : PY_SSIZE_T_MIN;
            if (i == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                i = PY_SSIZE_T_MIN;
            }
            if (i < 0 && i != PY_SSIZE_T_MIN) i += ndim;
            if (i < 0 || i >= ndim || reduced[i]) plain = 0;   /* (out of range, repeated: the Python path's error) */
            else reduced[i] = 1;
        }
        for (Py_ssize_t i = 0; i < ndim; i++) count += reduced[i];
    }
    if (!plain) {
        Py_DECREF(shape);
        Py_RETURN_NOTIMPLEMENTED;
    }
    PyObject *axes = PyTuple_New(count), *kept = PyTuple_New(ndim), *rest = PyTuple_New(ndim - count);
    for (Py_ssize_t i = 0, j = 0, k = 0; axes && kept && rest && i < ndim; i++) {
        PyObject *d = PyTuple_GET_ITEM(shape, i);
        if (reduced[i]) {
            PyObject *ai = PyLong_FromSsize_t(i), *one = PyLong_FromLong(1);
            if (ai == NULL || one == NULL) {
                Py_XDECREF(ai);
                Py_XDECREF(one);
                Py_CLEAR(axes);
                break;
            }
            PyTuple_SET_ITEM(axes, j++, ai);
            PyTuple_SET_ITEM(kept, i, one);
        } else {
            Py_INCREF(d);
            Py_INCREF(d);
            PyTuple_SET_ITEM(kept, i, d);
            PyTuple_SET_ITEM(rest, k++, d);
        }
    }
    Py_DECREF(shape);
    PyObject *out = NULL;
    if (axes && kept && rest) {
        if (count) {
            PyObject *arg = PyTuple_Pack(2, op, axes);
            out = arg ? shaped_node(rec.reduce, dtype, PyTuple_Pack(1, u), arg, kept) : NULL;
            Py_XDECREF(arg);
        } else {
            Py_INCREF(u);
            out = u;
        }
        if (out != NULL && !keepdims) {
            PyObject *flat = moved(out, rest, 0);
            Py_DECREF(out);
            out = flat;
        }
    }
    Py_XDECREF(axes);
    Py_XDECREF(kept);
    Py_XDECREF(rest);
    return out && as_array ? make_array(out, device) : out;
}

/* record_buffer_view(buf, shape): buffer_views.buffer_view's node (buf's BUFFER node, reshaped to
 * `shape` unless that is its own), each node's shape set; NotImplemented before setup_record. */
static PyObject *record_buffer_view(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyTuple_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "record_buffer_view takes a buffer and a shape (a tuple)");
        return NULL;
    }
    if (rec.uop_type == NULL || op_buffer == NULL) Py_RETURN_NOTIMPLEMENTED;
    PyObject *b = args[0], *shape = args[1];
    PyObject *dtype = PyObject_GetAttr(b, rec.str_dtype), *size = dtype ? PyObject_GetAttr(b, str_size) : NULL;
    PyObject *flat = size ? PyTuple_Pack(1, size) : NULL;
    PyObject *n = flat ? shaped_node(op_buffer, dtype, PyTuple_New(0), b, flat) : NULL;
    int same = n ? PyObject_RichCompareBool(shape, flat, Py_EQ) : -1;
    PyObject *out = NULL;
    if (same == 1) out = Py_NewRef(n);
    else if (same == 0) out = shaped_node(rec.reshape, dtype, PyTuple_Pack(1, n), shape, shape);
    Py_XDECREF(n);
    Py_XDECREF(flat);
    Py_XDECREF(size);
    Py_XDECREF(dtype);
    return out;
}

/* record_index(x, i): see the top of this file. */
static PyObject *record_index(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "record_index takes 2 arguments");
        return NULL;
    }
    PyObject *x = args[0], *key = args[1], *u, *device;
    Py_UCS4 kind;
    if (!PyLong_CheckExact(key)) Py_RETURN_NOTIMPLEMENTED;
    int usable = operand(x, 0, &u, &device, &kind);
    if (usable <= 0) {
        if (usable < 0) return NULL;
        Py_RETURN_NOTIMPLEMENTED;
    }
    PyObject *shape = node_get_shape((Node *)u, NULL);
    if (shape == NULL) return NULL;
    Py_ssize_t ndim = PyTuple_GET_SIZE(shape);
    Py_ssize_t n = ndim ? PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, 0)) : -1;
    Py_ssize_t i = n >= 0 ? PyLong_AsSsize_t(key) : 0;
    if (PyErr_Occurred()) {   /* (an index past Py_ssize_t: out of range, the Python path's error) */
        PyErr_Clear();
        n = -1;
    }
    if (i < 0) i += n;
    if (n < 0 || i < 0 || i >= n) {
        Py_DECREF(shape);
        Py_RETURN_NOTIMPLEMENTED;
    }
    PyObject *rest = PyTuple_GetSlice(shape, 1, ndim), *row = NULL, *result = NULL;
    if (rest != NULL && n != 1) {   /* row i, of shape (1,) + rest */
        PyObject *bounds = PyTuple_New(ndim), *one_row = PyTuple_New(ndim);
        int ok = bounds != NULL && one_row != NULL;
        for (Py_ssize_t k = 0; ok && k < ndim; k++) {
            PyObject *d = PyTuple_GET_ITEM(shape, k);
            PyObject *b = k ? shape_of_ints(2, 0, PyLong_AsSsize_t(d), 0) : shape_of_ints(2, i, i + 1, 0);
            PyObject *s = k ? (Py_INCREF(d), d) : PyLong_FromLong(1);
            if (b == NULL || s == NULL) {
                Py_XDECREF(b);
                Py_XDECREF(s);
                ok = 0;
                break;
            }
            PyTuple_SET_ITEM(bounds, k, b);
            PyTuple_SET_ITEM(one_row, k, s);
        }
        if (ok) row = shaped_node(rec.shrink, ((Node *)u)->dtype, PyTuple_Pack(1, u), bounds, one_row);
        Py_XDECREF(bounds);
        Py_XDECREF(one_row);
    } else if (rest != NULL) {
        row = Py_NewRef(u);
    }
    Py_DECREF(shape);
    if (row != NULL) {   /* without the first axis (a RESHAPE even where the shapes match: the Python path's) */
        PyObject *out = shaped_node(rec.reshape, ((Node *)row)->dtype, PyTuple_Pack(1, row), rest, rest);
        result = out ? make_array(out, device) : NULL;
    }
    Py_XDECREF(row);
    Py_XDECREF(rest);
    return result;
}

/* record_rolled(u, a, s, mask): see the top of this file. */
static PyObject *record_rolled(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyObject_TypeCheck(args[0], &NodeType) || !PyObject_TypeCheck(args[3], &NodeType)) {
        PyErr_SetString(PyExc_TypeError, "record_rolled(u, a, s, mask) takes two nodes and two ints");
        return NULL;
    }
    PyObject *u = args[0], *mask = args[3], *dtype = ((Node *)args[0])->dtype;
    Py_ssize_t a = PyLong_AsSsize_t(args[1]), s = PyLong_AsSsize_t(args[2]);
    if (PyErr_Occurred()) return NULL;
    PyObject *shape = node_get_shape((Node *)u, NULL);
    if (shape == NULL) return NULL;
    Py_ssize_t nd = PyTuple_GET_SIZE(shape);
    Py_ssize_t n = a >= 0 && a < nd ? PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, a)) : -1;
    if (n < 0 || s <= 0 || s >= n) {
        Py_DECREF(shape);
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "record_rolled: no such axis, or a shift not in (0, n)");
        return NULL;
    }
    /* per axis: the head's and the tail's bounds and shapes, and their pads back to the shape */
    PyObject *t[6] = {PyTuple_New(nd), PyTuple_New(nd), PyTuple_New(nd), PyTuple_New(nd), PyTuple_New(nd), PyTuple_New(nd)};
    int ok = 1;
    for (int j = 0; j < 6; j++) ok = ok && t[j] != NULL;
    for (Py_ssize_t k = 0; ok && k < nd; k++) {
        PyObject *d = PyTuple_GET_ITEM(shape, k);
        Py_ssize_t dv = k == a ? n : PyLong_AsSsize_t(d);
        PyObject *v[6] = {
            k == a ? shape_of_ints(2, 0, n - s, 0) : shape_of_ints(2, 0, dv, 0),
            k == a ? shape_of_ints(2, n - s, n, 0) : shape_of_ints(2, 0, dv, 0),
            k == a ? PyLong_FromSsize_t(n - s) : Py_NewRef(d),
            k == a ? PyLong_FromSsize_t(s) : Py_NewRef(d),
            k == a ? shape_of_ints(2, s, 0, 0) : shape_of_ints(2, 0, 0, 0),
            k == a ? shape_of_ints(2, 0, n - s, 0) : shape_of_ints(2, 0, 0, 0)};
        for (int j = 0; j < 6; j++) {
            if (v[j] == NULL) ok = 0;
            else PyTuple_SET_ITEM(t[j], k, v[j]);
        }
    }
    PyObject *head = NULL, *tail = NULL, *out = NULL;
    if (ok && !PyErr_Occurred()) {
        head = shaped_node(rec.shrink, dtype, PyTuple_Pack(1, u), t[0], t[2]);
        tail = head ? shaped_node(rec.shrink, dtype, PyTuple_Pack(1, u), t[1], t[3]) : NULL;
        PyObject *padded_head = tail ? shaped_node(rec.pad, dtype, PyTuple_Pack(1, head), t[4], shape) : NULL;
        PyObject *padded_tail = padded_head ? shaped_node(rec.pad, dtype, PyTuple_Pack(1, tail), t[5], shape) : NULL;
        if (padded_tail != NULL)
            out = shaped_node(rec.where, dtype, PyTuple_Pack(3, mask, padded_head, padded_tail), Py_None, shape);
        Py_XDECREF(padded_head);
        Py_XDECREF(padded_tail);
    }
    Py_XDECREF(head);
    Py_XDECREF(tail);
    for (int j = 0; j < 6; j++) Py_XDECREF(t[j]);
    Py_DECREF(shape);
    return out;
}

/* record_array(node, device): Array._from_uop's array with gradients on (arrays.wrap's common case);
 * NotImplemented before setup_record. */
static PyObject *record_array(PyObject *module, PyObject *const *args, Py_ssize_t n) {
    if (n != 2 || !PyObject_TypeCheck(args[0], &NodeType)) {
        PyErr_SetString(PyExc_TypeError, "record_array(node, device)");
        return NULL;
    }
    return rec.array == NULL ? Py_NewRef(Py_NotImplemented) : make_array(Py_NewRef(args[0]), args[1]);
}

static PyMethodDef record_methods[] = {
    {"record_array", (PyCFunction)(void (*)(void))record_array, METH_FASTCALL,
     "record_array(node, device) -> the array of node on device (Array._from_uop, gradients on)."},
    {"setup_record", setup_record, METH_VARARGS,
     "setup_record(Array, grad_mode, consts, const, check_scalar_fits, UOp, (RESHAPE, EXPAND, MUL, REDUCE_AXIS, ADD, "
     "SHRINK, PAD, WHERE))."},
    {"record_rolled", (PyCFunction)(void (*)(void))record_rolled, METH_FASTCALL,
     "record_rolled(u, a, s, mask) -> the node of u rolled by s along axis a (0 < s < n)."},
    {"record_binary", (PyCFunction)(void (*)(void))record_binary, METH_FASTCALL,
     "record_binary(x, other, op, reflected, ints[, result dtype]) -> the array of x (op) other, or NotImplemented."},
    {"record_matmul", (PyCFunction)(void (*)(void))record_matmul, METH_FASTCALL,
     "record_matmul(x1, x2) -> the array of x1 @ x2, or NotImplemented."},
    {"record_unary", (PyCFunction)(void (*)(void))record_unary, METH_FASTCALL,
     "record_unary(x, op, kinds) -> the array of op(x), or NotImplemented."},
    {"record_reduce", (PyCFunction)(void (*)(void))record_reduce, METH_FASTCALL,
     "record_reduce(x, op, axis, keepdims[, as_array]) -> the node (or array) of the reduction, or NotImplemented."},
    {"record_buffer_view", (PyCFunction)(void (*)(void))record_buffer_view, METH_FASTCALL,
     "record_buffer_view(buf, shape) -> the node reading buf as an array of shape (buffer_views.buffer_view)."},
    {"record_index", (PyCFunction)(void (*)(void))record_index, METH_FASTCALL,
     "record_index(x, i) -> the array of x[i] for a Python int i, or NotImplemented."},
    {NULL},
};

static int add_record_functions(PyObject *module) {
    return PyModule_AddFunctions(module, record_methods);
}
