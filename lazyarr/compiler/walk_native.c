/* The schedule cache's structure walk and the graph's toposort in C (compiled right after
 * uop_native.c, whose Node, table and liftable-constant test they use; stages_native.c after them
 * uses their walk marks and stack frames).
 *
 * walk(sink, realized_for, names, max_parts): walk.structure_key's walk (the Python version, the
 * reference and fallback, is lazyarr.compiler.walk._walk), with an explicit stack;
 * toposort(root, stop): UOp.toposort. */

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

/* x's number in ATOMS (atom_number's, added if new), as walk._atom. */
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

/* The atom of an op, a dtype or a device's name, remembered by address (an enum's and a dtype's
 * __hash__ are Python functions). */
static Remembered atoms_by_address[512];

static int fixed_atom(PyObject *x, long long *out) {
    return REMEMBERED(atoms_by_address, x, atom, out);
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

/* Append n's part to the key, as walk._walk's words: a liftable constant's (-1, dtype's atom,
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
        int rc = name == NULL || (nsize == -1 && PyErr_Occurred()) || fixed_atom(name, &name_atom) < 0 ? -1 : 0;
        Py_XDECREF(size);
        Py_XDECREF(device);
        Py_XDECREF(name);
        if (rc < 0 || put(w, -2) < 0 || put(w, dtype) < 0 || put(w, nsize) < 0 || put(w, name_atom) < 0 ||
            put(w, PyList_GET_SIZE(w->inputs)) < 0 || PyList_Append(w->inputs, n->arg) < 0)
            return -1;
    } else {
        long long op_atom;
        if (!n->arg_atom_known) {   /* (hashing the key and reading a 62-bit int: once a node) */
            PyObject *key = arg_key_of(n->arg);
            int rc = key == NULL ? -1 : atom(key, &n->arg_atom);
            Py_XDECREF(key);
            if (rc < 0) return -1;
            n->arg_atom_known = 1;
        }
        long long arg_atom = n->arg_atom;
        if (fixed_atom(n->op, &op_atom) < 0) return -1;
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
