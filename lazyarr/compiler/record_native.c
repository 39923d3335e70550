/* Recording the commonest elementwise operation in C: elementwise.fast_operator's first case,
 * `x (op) c` for an array x of a float dtype and a Python float or int c (of an integer dtype and a
 * Python int, where `ints`), and `x (op) y` for two arrays of one dtype, shape and device. A loop
 * records dozens of these an iteration; in Python each costs about a microsecond, most of it the
 * calls that find the constant and make the array.
 *
 * record_binary(x, other, op, reflected, ints) builds the node the Python path builds (the constant
 * from graph.const's memo, or graph.const itself; the node's shape set) and the array as
 * Array._from_uop makes it (of class Array.made, holding the node, recorded as its holder), or
 * returns NotImplemented for anything else (other operands, other dtypes, broadcasting, no_grad()),
 * which the caller takes to the Python path. Compiled after uop_native.c, as one file with it. */

static struct {
    PyObject *array;           /* arrays.Array: its `made` is the class of the arrays made */
    Py_ssize_t uop, device, leaf_grad, grad, released, viewof, views;   /* Array's slots' offsets */
    PyObject *grad_mode;       /* arrays.grad_mode: `disabled` > 0 inside no_grad() */
    PyObject *consts;          /* graph._consts: (type, value, id(dtype), shape) -> constant node */
    PyObject *const_fn;        /* graph.const */
    PyObject *check_fits;      /* dtypes.check_scalar_fits */
    PyTypeObject *uop_type;    /* uop.UOp */
    PyObject *str_made, *str_disabled, *str_kind;
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

/* setup_record(Array, grad_mode, consts, const, check_scalar_fits, UOp) */
static PyObject *setup_record(PyObject *module, PyObject *args) {
    PyObject *array, *grad_mode, *consts, *const_fn, *check_fits, *uop_type;
    if (!PyArg_ParseTuple(args, "O!OO!OOO!:setup_record", &PyType_Type, &array, &grad_mode, &PyDict_Type, &consts,
                          &const_fn, &check_fits, &PyType_Type, &uop_type))
        return NULL;
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
        if (rec.str_made == NULL || rec.str_disabled == NULL || rec.str_kind == NULL) return NULL;
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

/* The constants met last, by (value's type and bits, dtype, shape object): a loop's scalars come
 * back every step, and building graph.const's key and hashing it costs most of a lookup there.
 * Each entry holds its node. */
#define RECENT 64
static struct {
    int is_float;
    long long bits;
    PyObject *dtype, *shape, *node;
} recent[RECENT];

/* graph.const(value, dtype, shape): from `recent`, or from graph.const's memo where the value has
 * an entry there (the key graph.const makes; zeros and NaN take the call), else the call. A new
 * reference. */
static PyObject *constant(PyObject *value, PyObject *dtype, PyObject *shape) {
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
    if (c == NULL) c = PyObject_CallFunctionObjArgs(rec.const_fn, value, dtype, shape, NULL);
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
    Py_INCREF(device);
    SLOT(t, rec.device) = device;
    Py_INCREF(Py_False);
    SLOT(t, rec.leaf_grad) = Py_False;
    Py_INCREF(Py_None);
    SLOT(t, rec.grad) = Py_None;
    Py_INCREF(Py_False);
    SLOT(t, rec.released) = Py_False;
    Py_INCREF(Py_None);
    SLOT(t, rec.viewof) = Py_None;
    Py_INCREF(Py_None);
    SLOT(t, rec.views) = Py_None;
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

/* record_binary(x, other, op, reflected, ints): see the top of this file. */
static PyObject *record_binary(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "record_binary takes 5 arguments");
        return NULL;
    }
    PyObject *x = args[0], *other = args[1], *op = args[2];
    int reflected = PyObject_IsTrue(args[3]), ints = PyObject_IsTrue(args[4]);
    if (reflected < 0 || ints < 0) return NULL;
    if (rec.array == NULL || !PyObject_TypeCheck(x, (PyTypeObject *)rec.array)) Py_RETURN_NOTIMPLEMENTED;
    PyObject *u = SLOT(x, rec.uop), *device = SLOT(x, rec.device);
    if (u == NULL || device == NULL || !PyObject_TypeCheck(u, &NodeType)) Py_RETURN_NOTIMPLEMENTED;
    PyObject *disabled = PyObject_GetAttr(rec.grad_mode, rec.str_disabled);
    if (disabled == NULL) return NULL;
    int off = PyObject_IsTrue(disabled);
    Py_DECREF(disabled);
    if (off != 0) {   /* (no_grad(): the Python path adds its DETACH) */
        if (off < 0) return NULL;
        Py_RETURN_NOTIMPLEMENTED;
    }
    PyObject *dtype = ((Node *)u)->dtype;
    PyObject *kind_str = PyObject_GetAttr(dtype, rec.str_kind);
    if (kind_str == NULL) return NULL;
    Py_UCS4 kind = PyUnicode_Check(kind_str) && PyUnicode_GET_LENGTH(kind_str) == 1 ? PyUnicode_READ_CHAR(kind_str, 0) : 0;
    Py_DECREF(kind_str);
    int is_float = kind == 'f', is_int = (kind == 'i' || kind == 'u') && ints;
    PyObject *second;   /* the other source: the constant, or the other array's node */
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
        second = constant(other, dtype, shape);
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
        Py_XDECREF(vshape);
        if (equal <= 0) {   /* (broadcasting: the Python path) */
            Py_DECREF(shape);
            if (equal < 0) return NULL;
            Py_RETURN_NOTIMPLEMENTED;
        }
        Py_INCREF(v);
        second = v;
    } else {
        Py_DECREF(shape);
        Py_RETURN_NOTIMPLEMENTED;
    }
    PyObject *src = reflected ? PyTuple_Pack(2, second, u) : PyTuple_Pack(2, u, second);
    Py_DECREF(second);
    PyObject *node_args = src ? PyTuple_Pack(3, op, dtype, src) : NULL;
    Py_XDECREF(src);
    PyObject *n = node_args ? node_new(rec.uop_type, node_args, NULL) : NULL;
    Py_XDECREF(node_args);
    if (n == NULL) {
        Py_DECREF(shape);
        return NULL;
    }
    Node *node = (Node *)n;
    if ((node->shape == NULL || node->shape == Py_None) &&
        node_set_cache(node, shape, (void *)offsetof(Node, shape)) < 0) {
        Py_DECREF(shape);
        Py_DECREF(n);
        return NULL;
    }
    Py_DECREF(shape);
    return make_array(n, device);
}
