/* The buffer pass of prepared launches (lazyarr.runtime.prepared.PreparedLaunches.run) in C,
 * compiled after record_native.c. A loop realizes the same structure every iteration, and this pass
 * (addresses, memory from the pool, the buffers no graph reads any more) was its last Python per
 * buffer: ~40 us of Python a training step of twenty-odd buffers paid every step.
 *
 * It knows buffers by their attributes (storage, owns, base, _real, _addr: runtime.device.Buffer's)
 * and the CPU device's pool by its three (_pool: bytes -> [(memory, address)], _pooled_bytes,
 * _pool_limit), and asks the node table whether a buffer's BUFFER node is alive, as
 * realize.buffer_readable does. It lends storage and gives it back to the pool itself
 * (release_buffer is also what a dying Buffer calls: runtime.device.release_storage); anything else
 * (a buffer's own allocation, another device's release, an address not cached) is the Python
 * callables' it is handed. prepared.py keeps the same pass in Python: the reference, and the path
 * without this module. */

static struct {
    PyObject *storage, *owns, *base, *real, *addr, *dtype, *release, *pool, *pooled_bytes, *size, *device, *itemsize;
    PyObject *pool_limit;
    PyObject *real_view;   /* runtime.device.RealView: a complex buffer's view is never given back */
    PyObject *buffer;      /* runtime.device.Buffer: release_buffer's own class (a subclass: its method) */
    PyObject *array_address;   /* cpu_program.array_address */
    /* where Buffer's slots live in its instances (read and written directly: a loop makes and frees
     * dozens of buffers an iteration); -1 where a slot is not a plain one */
    Py_ssize_t at_device, at_size, at_dtype, at_storage, at_base, at_owns, at_real, at_addr;
} buf;

/* The offset of Buffer's slot `name` (record_native.c's slot_offset), or -1. */
static Py_ssize_t buffer_slot(PyObject *t, const char *name) {
    Py_ssize_t at;
    if (slot_offset(t, name, &at) == 0) return at;
    PyErr_Clear();
    return -1;
}

/* Slot `at` of b set to v (a new reference taken), the old value dropped. */
static void slot_set(PyObject *b, Py_ssize_t at, PyObject *v) {
    Py_XSETREF(SLOT(b, at), Py_NewRef(v));
}

/* Attribute `name` of buffer b (a new reference), through its slot where b is a plain Buffer. */
static PyObject *buffer_attr(PyObject *b, Py_ssize_t at, PyObject *name) {
    if (at >= 0 && buf.buffer != NULL && Py_TYPE(b) == (PyTypeObject *)buf.buffer) {
        PyObject *v = SLOT(b, at);
        if (v != NULL) return Py_NewRef(v);
    }
    return PyObject_GetAttr(b, name);
}

static int slots_known(void) {
    return buf.at_device >= 0 && buf.at_size >= 0 && buf.at_dtype >= 0 && buf.at_storage >= 0 && buf.at_base >= 0 &&
           buf.at_owns >= 0 && buf.at_real >= 0 && buf.at_addr >= 0;
}

static PyObject *setup_buffers(PyObject *module, PyObject *args) {
    PyObject *real_view, *buffer = NULL, *array_address = NULL;
    if (!PyArg_ParseTuple(args, "O!|O!O:setup_buffers", &PyType_Type, &real_view, &PyType_Type, &buffer, &array_address))
        return NULL;
    if (buf.storage == NULL) {
        const char *names[] = {"storage", "owns", "base", "_real", "_addr", "dtype", "release", "_pool",
                               "_pooled_bytes", "size", "device", "itemsize", "_pool_limit"};
        PyObject **slots[] = {&buf.storage, &buf.owns, &buf.base, &buf.real, &buf.addr, &buf.dtype, &buf.release,
                              &buf.pool, &buf.pooled_bytes, &buf.size, &buf.device, &buf.itemsize, &buf.pool_limit};
        for (int i = 0; i < 13; i++)
            if ((*slots[i] = PyUnicode_InternFromString(names[i])) == NULL) return NULL;
    }
    Py_INCREF(real_view);
    Py_XSETREF(buf.real_view, real_view);
    Py_XINCREF(buffer);
    Py_XSETREF(buf.buffer, buffer);
    buf.at_device = buf.at_size = buf.at_dtype = buf.at_storage = -1;
    buf.at_base = buf.at_owns = buf.at_real = buf.at_addr = -1;
    if (buffer != NULL) {
        buf.at_device = buffer_slot(buffer, "device");
        buf.at_size = buffer_slot(buffer, "size");
        buf.at_dtype = buffer_slot(buffer, "dtype");
        buf.at_storage = buffer_slot(buffer, "storage");
        buf.at_base = buffer_slot(buffer, "base");
        buf.at_owns = buffer_slot(buffer, "owns");
        buf.at_real = buffer_slot(buffer, "_real");
        buf.at_addr = buffer_slot(buffer, "_addr");
    }
    Py_XINCREF(array_address);
    Py_XSETREF(buf.array_address, array_address);
    Py_RETURN_NONE;
}

/* An int attribute of x into *out. */
static int attr_long(PyObject *x, PyObject *name, long long *out) {
    PyObject *v = PyObject_GetAttr(x, name);
    if (v == NULL) return -1;
    *out = PyLong_AsLongLong(v);
    Py_DECREF(v);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

/* A buffer's bytes (size · dtype.itemsize). */
static int buffer_nbytes(PyObject *b, long long *out) {
    long long size, itemsize;
    PyObject *dtype = buffer_attr(b, buf.at_dtype, buf.dtype);
    PyObject *n = dtype ? buffer_attr(b, buf.at_size, buf.size) : NULL;
    size = n ? PyLong_AsLongLong(n) : -1;
    Py_XDECREF(n);
    if (dtype == NULL || (size == -1 && PyErr_Occurred()) || attr_long(dtype, buf.itemsize, &itemsize) < 0) {
        Py_XDECREF(dtype);
        return -1;
    }
    Py_DECREF(dtype);
    *out = size * itemsize;
    return 0;
}

/* The address b caches for `storage` (b._addr is (storage, address)): a new reference, or NULL
 * (with an error, or none cached). */
static PyObject *cached_address(PyObject *b, PyObject *storage) {
    PyObject *cached = buffer_attr(b, buf.at_addr, buf.addr), *a = NULL;
    if (cached != NULL && PyTuple_CheckExact(cached) && PyTuple_GET_SIZE(cached) == 2 &&
        PyTuple_GET_ITEM(cached, 0) == storage)
        a = Py_NewRef(PyTuple_GET_ITEM(cached, 1));
    Py_XDECREF(cached);
    return a;
}

/* CPUDevice.free(storage, nbytes, address): the memory kept in the device's pool for the next
 * allocation of its size, unless something else still views it (an array numpy() handed out) or
 * the pool is full. `pool`: the device's. */
static int free_into_pool(PyObject *device, PyObject *pool, PyObject *b, PyObject *storage, long long nbytes) {
    if (nbytes == 0 || !PyDict_CheckExact(pool)) return 0;
    PyObject *raw = PyObject_GetAttr(storage, buf.base);
    if (raw == NULL) return -1;
    int viewed = raw == Py_None || Py_REFCNT(raw) > 2;   /* (its view's reference and this one) */
    Py_DECREF(raw);
    long long pooled, limit;
    if (viewed) return 0;
    if (attr_long(device, buf.pooled_bytes, &pooled) < 0 || attr_long(device, buf.pool_limit, &limit) < 0) return -1;
    if (pooled + nbytes > limit) return 0;
    PyObject *addr = cached_address(b, storage);
    if (addr == NULL && !PyErr_Occurred()) addr = PyObject_CallOneArg(buf.array_address, storage);
    PyObject *key = addr ? PyLong_FromLongLong(nbytes) : NULL;
    PyObject *list = key ? PyDict_GetItemWithError(pool, key) : NULL;   /* borrowed */
    int rc = -1;
    if (key != NULL && list == NULL && !PyErr_Occurred()) {
        list = PyList_New(0);
        if (list != NULL && PyDict_SetItem(pool, key, list) == 0) Py_DECREF(list);   /* (the pool holds it) */
        else Py_CLEAR(list);
    }
    PyObject *entry = list ? PyTuple_Pack(2, storage, addr) : NULL;
    PyObject *total = entry ? PyLong_FromLongLong(pooled + nbytes) : NULL;
    if (total != NULL && PyList_Append(list, entry) == 0) rc = PyObject_SetAttr(device, buf.pooled_bytes, total);
    Py_XDECREF(total);
    Py_XDECREF(entry);
    Py_XDECREF(key);
    Py_XDECREF(addr);
    return rc;
}

/* b.release(): a buffer of the CPU device gives the storage it owns back to the pool here; any
 * other (another device's, a subclass's) by its method. */
static int release_buffer(PyObject *b) {
    if (buf.buffer == NULL || Py_TYPE(b) != (PyTypeObject *)buf.buffer) {
        PyObject *done = PyObject_CallMethodNoArgs(b, buf.release);
        Py_XDECREF(done);
        return done == NULL ? -1 : 0;
    }
    PyObject *owns = buffer_attr(b, buf.at_owns, buf.owns);
    int yes = owns == NULL ? -1 : PyObject_IsTrue(owns);
    Py_XDECREF(owns);
    if (yes <= 0) return yes;
    PyObject *storage = buffer_attr(b, buf.at_storage, buf.storage);
    if (storage == NULL) return -1;
    if (storage == Py_None) {
        Py_DECREF(storage);
        return 0;
    }
    PyObject *device = buffer_attr(b, buf.at_device, buf.device);
    PyObject *pool = device ? PyObject_GetAttr(device, buf.pool) : NULL;
    int rc = 0;
    if (pool == NULL && device != NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {   /* (not the CPU's) */
        PyErr_Clear();
        PyObject *done = PyObject_CallMethodNoArgs(b, buf.release);
        rc = done == NULL ? -1 : 0;
        Py_XDECREF(done);
    } else {
        long long nbytes;
        rc = pool == NULL || buffer_nbytes(b, &nbytes) < 0 ? -1 : free_into_pool(device, pool, b, storage, nbytes);
        if (rc == 0 && slots_known()) {   /* (b is a plain Buffer: checked above) */
            slot_set(b, buf.at_storage, Py_None);
            slot_set(b, buf.at_addr, Py_None);
            slot_set(b, buf.at_owns, Py_False);
        } else if (rc == 0) {
            rc = PyObject_SetAttr(b, buf.storage, Py_None) == 0 && PyObject_SetAttr(b, buf.addr, Py_None) == 0 &&
                 PyObject_SetAttr(b, buf.owns, Py_False) == 0 ? 0 : -1;
        }
    }
    Py_XDECREF(pool);
    Py_XDECREF(device);
    Py_DECREF(storage);
    return rc;
}

/* new_buffers(specs): Buffer(device, size, dtype) for each (size, dtype, device) of specs, as
 * Buffer.__init__ makes them (no storage yet), without its Python call. */
static PyObject *new_buffers(PyObject *module, PyObject *specs) {
    if (!PyTuple_CheckExact(specs)) {
        PyErr_SetString(PyExc_TypeError, "new_buffers takes a tuple of (size, dtype, device)");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(specs);
    PyObject *out = PyList_New(n);
    if (out == NULL) return NULL;
    PyTypeObject *t = (PyTypeObject *)buf.buffer;
    int fast = t != NULL && slots_known();
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *spec = PyTuple_GET_ITEM(specs, i), *b;
        if (!PyTuple_CheckExact(spec) || PyTuple_GET_SIZE(spec) != 3) {
            PyErr_SetString(PyExc_TypeError, "new_buffers: a spec is not (size, dtype, device)");
            Py_DECREF(out);
            return NULL;
        }
        PyObject *size = PyTuple_GET_ITEM(spec, 0), *dtype = PyTuple_GET_ITEM(spec, 1);
        PyObject *device = PyTuple_GET_ITEM(spec, 2);
        if (fast) {
            b = t->tp_alloc(t, 0);
            if (b != NULL) {
                slot_set(b, buf.at_device, device);
                slot_set(b, buf.at_size, size);
                slot_set(b, buf.at_dtype, dtype);
                slot_set(b, buf.at_storage, Py_None);
                slot_set(b, buf.at_base, Py_None);
                slot_set(b, buf.at_owns, Py_False);
                slot_set(b, buf.at_real, Py_None);
                slot_set(b, buf.at_addr, Py_None);
            }
        } else {
            b = t != NULL ? PyObject_CallFunctionObjArgs((PyObject *)t, device, size, dtype, NULL) : NULL;
            if (t == NULL) PyErr_SetString(PyExc_RuntimeError, "setup_buffers() was not called");
        }
        if (b == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, b);
    }
    return out;
}

/* mark_points(new, points, order): each realize point of a cache entry marked computed, as
 * schedule.bind_entry's points are by realize.replay: order[pos]._view = the view of new[j], of
 * order[pos]'s shape, for each (pos, j) of points. */
static PyObject *mark_points(PyObject *module, PyObject *args) {
    PyObject *new, *points, *order;
    if (!PyArg_ParseTuple(args, "O!O!O!:mark_points", &PyList_Type, &new, &PyTuple_Type, &points, &PyList_Type, &order))
        return NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(points); i++) {
        PyObject *point = PyTuple_GET_ITEM(points, i);
        Py_ssize_t pos, j;
        if (!PyArg_ParseTuple(point, "nn:mark_points", &pos, &j)) return NULL;
        if (pos < 0 || pos >= PyList_GET_SIZE(order) || j < 0 || j >= PyList_GET_SIZE(new)) {
            PyErr_SetString(PyExc_IndexError, "mark_points: a point outside the order or the new buffers");
            return NULL;
        }
        Node *node = (Node *)PyList_GET_ITEM(order, pos);
        PyObject *shape = node_get_shape(node, NULL);
        if (shape == NULL) return NULL;
        PyObject *view_args[2] = {PyList_GET_ITEM(new, j), shape};
        PyObject *view = record_buffer_view(module, view_args, 2);
        Py_DECREF(shape);
        if (view == NULL) return NULL;
        if (view == Py_NotImplemented) {
            Py_DECREF(view);
            PyErr_SetString(PyExc_RuntimeError, "mark_points: setup_record() was not called");
            return NULL;
        }
        node_set_cache(node, view, (void *)offsetof(Node, view));   /* (as `_view = view` sets it) */
        Py_DECREF(view);
    }
    Py_RETURN_NONE;
}

static PyObject *release_buffer_py(PyObject *module, PyObject *b) {
    return release_buffer(b) < 0 ? NULL : Py_NewRef(Py_None);
}

/* Whether attribute `name` of b is None (1), not (0), or an error (-1). */
static int attr_is_none(PyObject *b, PyObject *name) {
    PyObject *v = PyObject_GetAttr(b, name);
    if (v == NULL) return -1;
    int none = v == Py_None;
    Py_DECREF(v);
    return none;
}

/* realize.buffer_readable(b) for a buffer that is no complex buffer's view and has none: whether
 * its BUFFER node is alive; -1 on an error, 2 where Python must answer (a real view exists). */
static int readable(PyObject *b) {
    int no_real = attr_is_none(b, buf.real);
    if (no_real <= 0) return no_real < 0 ? -1 : 2;
    PyObject *dtype = PyObject_GetAttr(b, buf.dtype);
    if (dtype == NULL) return -1;
    PyObject *empty = PyTuple_New(0);
    PyObject *found = empty ? find_node(op_buffer, dtype, empty, b) : NULL;
    Py_DECREF(dtype);
    Py_XDECREF(empty);
    if (found == NULL) return PyErr_Occurred() ? -1 : 0;
    Py_DECREF(found);
    return 1;
}

/* b's storage's address into *out: the cached one (b._addr is (storage, address) of this storage),
 * else address_fn(b)'s. */
static int address_of(PyObject *b, PyObject *address_fn, uintptr_t *out) {
    PyObject *storage = PyObject_GetAttr(b, buf.storage);
    PyObject *a = storage ? cached_address(b, storage) : NULL;
    if (storage != NULL && a == NULL && !PyErr_Occurred()) a = PyObject_CallOneArg(address_fn, b);
    Py_XDECREF(storage);
    if (a == NULL) return -1;
    *out = (uintptr_t)PyLong_AsUnsignedLongLong(a);
    Py_DECREF(a);
    return *out == (uintptr_t)-1 && PyErr_Occurred() ? -1 : 0;
}

/* Memory for new buffer b (it has none) from the pool's memory of `nbytes` (viewed as `np_dtype`),
 * owned by b: its address into *out; 0 where the pool has none of that size (then the caller
 * allocates), -1 on an error. As CPUDevice._take and allocate_owned do it. */
static int take_pooled(PyObject *device, PyObject *b, PyObject *nbytes, PyObject *np_dtype, uintptr_t *out) {
    PyObject *pool = PyObject_GetAttr(device, buf.pool);
    if (pool == NULL) return -1;
    PyObject *pooled = PyDict_GetItemWithError(pool, nbytes);   /* borrowed */
    if (pooled == NULL || !PyList_CheckExact(pooled) || PyList_GET_SIZE(pooled) == 0) {
        Py_DECREF(pool);
        return PyErr_Occurred() ? -1 : 0;
    }
    Py_ssize_t last = PyList_GET_SIZE(pooled) - 1;
    PyObject *entry = PyList_GET_ITEM(pooled, last);
    Py_INCREF(entry);
    int rc = PyList_SetSlice(pooled, last, last + 1, NULL);
    Py_DECREF(pool);
    if (rc < 0 || !PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 2) {
        Py_DECREF(entry);
        if (rc == 0) PyErr_SetString(PyExc_TypeError, "buffer_pass: a pool entry is not (memory, address)");
        return -1;
    }
    /* the pool's count of the bytes it holds */
    PyObject *held = PyObject_GetAttr(device, buf.pooled_bytes);
    PyObject *less = held ? PyNumber_Subtract(held, nbytes) : NULL;
    rc = less ? PyObject_SetAttr(device, buf.pooled_bytes, less) : -1;
    Py_XDECREF(held);
    Py_XDECREF(less);
    PyObject *memory = PyTuple_GET_ITEM(entry, 0), *addr = PyTuple_GET_ITEM(entry, 1);
    PyObject *dtype = rc == 0 ? PyObject_GetAttr(memory, buf.dtype) : NULL;
    PyObject *storage = NULL;
    if (dtype != NULL) {   /* memory keeps the dtype it was freed with: a view where it is another */
        storage = dtype == np_dtype ? (Py_INCREF(memory), memory) : PyObject_CallMethod(memory, "view", "O", np_dtype);
        Py_DECREF(dtype);
    }
    PyObject *cached = storage ? PyTuple_Pack(2, storage, addr) : NULL;
    rc = cached && PyObject_SetAttr(b, buf.storage, storage) == 0 && PyObject_SetAttr(b, buf.addr, cached) == 0 &&
         PyObject_SetAttr(b, buf.owns, Py_True) == 0 ? 0 : -1;
    if (rc == 0) {
        *out = (uintptr_t)PyLong_AsUnsignedLongLong(addr);
        if (*out == (uintptr_t)-1 && PyErr_Occurred()) rc = -1;
    }
    Py_XDECREF(storage);
    Py_XDECREF(cached);
    Py_DECREF(entry);
    return rc < 0 ? -1 : 1;
}

/* Whether b owns storage of its own (owns, has storage, wraps no memory it was given): 1, 0, -1. */
static int owns_storage(PyObject *b) {
    PyObject *owns = PyObject_GetAttr(b, buf.owns);
    if (owns == NULL) return -1;
    int yes = PyObject_IsTrue(owns);
    Py_DECREF(owns);
    if (yes <= 0) return yes;
    int none;
    if ((none = attr_is_none(b, buf.storage)) != 0) return none < 0 ? -1 : 0;
    if ((none = attr_is_none(b, buf.base)) != 1) return none < 0 ? -1 : 0;
    return 1;
}

/* executor.dead(b, readable) without the last test (1: b owns memory no other buffer shares) */
static int owns_alone(PyObject *b) {
    int own = owns_storage(b), none;
    if (own <= 0) return own;
    if ((none = attr_is_none(b, buf.real)) != 1) return none < 0 ? -1 : 0;
    return buf.real_view == NULL || !PyObject_TypeCheck(b, (PyTypeObject *)buf.real_view);
}

/* Whether a graph reads buffer b: readable(b), or Python's readable_fn(b) where C cannot tell. */
static int read_by_a_graph(PyObject *b, PyObject *readable_fn) {
    int r = readable(b);
    if (r == 2) {
        PyObject *answer = PyObject_CallOneArg(readable_fn, b);
        r = answer == NULL ? -1 : PyObject_IsTrue(answer);
        Py_XDECREF(answer);
    }
    return r;
}

/* Give b's memory back (b.release()) where no graph reads it: `check_owner` for an input (whose
 * memory may be shared or lent), else a new buffer of the structure's, which owns its memory. */
static int give_back_if_unread(PyObject *b, int check_owner, PyObject *readable_fn) {
    if (check_owner) {
        int alone = owns_alone(b);
        if (alone <= 0) return alone;
    }
    int r = read_by_a_graph(b, readable_fn);
    if (r != 0) return r < 0 ? -1 : 0;
    return release_buffer(b);
}

/* executor.lendable(k, o, readable) (k past its last use may hand its storage to output o: memory
 * of its own, of o's size and device, that no graph reads), then o.take_storage(k) where it may. */
static int lend_if_able(PyObject *k, PyObject *o, PyObject *readable_fn) {
    PyObject *kdev = NULL, *odev = NULL;
    long long kbytes, obytes;
    int own = owns_storage(k);
    if (own <= 0) return own;
    if (buffer_nbytes(k, &kbytes) < 0 || buffer_nbytes(o, &obytes) < 0) return -1;
    if (kbytes != obytes) return 0;
    kdev = PyObject_GetAttr(k, buf.device);
    odev = kdev ? PyObject_GetAttr(o, buf.device) : NULL;
    int same = odev != NULL && kdev == odev;
    Py_XDECREF(kdev);
    Py_XDECREF(odev);
    if (!same) return odev == NULL ? -1 : 0;
    int r = read_by_a_graph(k, readable_fn);
    if (r != 0) return r < 0 ? -1 : 0;
    /* o.take_storage(k): the storage, its cached address and its ownership move to o */
    PyObject *storage = PyObject_GetAttr(k, buf.storage);
    PyObject *addr = storage ? PyObject_GetAttr(k, buf.addr) : NULL;
    int rc = addr != NULL && PyObject_SetAttr(o, buf.storage, storage) == 0 && PyObject_SetAttr(o, buf.addr, addr) == 0 &&
             PyObject_SetAttr(o, buf.owns, Py_True) == 0 && PyObject_SetAttr(k, buf.owns, Py_False) == 0 ? 0 : -1;
    Py_XDECREF(storage);
    Py_XDECREF(addr);
    return rc;
}

/* buffer_pass(buffers, read, steps, values, device, address, allocate, readable[, threads, scalars]): the
 * pass of PreparedLaunches.run over this run's buffers (inputs, then new ones), the buffers'
 * addresses written to words[1 + i] of the values array at address `values`. `read`: the inputs the
 * kernels read; each step (one a kernel): ((output, argument) pairs that may lend, (new buffer, its
 * bytes, its NumPy dtype) given memory, inputs used last, new buffers used last that are no
 * outputs). address(b), allocate(b) (CPUDevice.allocate_owned) and readable(b) are Python's, for
 * what this does not do itself. `threads` (optional): word 0; `scalars` (optional, a list): the
 * words after the buffers' where all are floats, and the answer says so. */
static PyObject *buffer_pass(PyObject *module, PyObject *args) {
    PyObject *buffers, *read, *steps, *values, *device, *address_fn, *allocate_fn, *readable_fn;
    PyObject *scalars = NULL;
    Py_ssize_t threads = -1;
    if (!PyArg_ParseTuple(args, "O!O!O!OOOOO|nO!:buffer_pass", &PyList_Type, &buffers, &PyTuple_Type, &read,
                          &PyTuple_Type, &steps, &values, &device, &address_fn, &allocate_fn, &readable_fn,
                          &threads, &PyList_Type, &scalars))
        return NULL;
    if (buf.storage == NULL || op_buffer == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "uop_native.setup_buffers() was not called");
        return NULL;
    }
    uintptr_t *words = (uintptr_t *)PyLong_AsVoidPtr(values);
    if (words == NULL && PyErr_Occurred()) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(buffers);
    if (threads >= 0) words[0] = (uintptr_t)threads;
#define BUFFER(i) (((i) >= 0 && (i) < n) ? PyList_GET_ITEM(buffers, (i)) : NULL)
#define INDEX(t, j) PyLong_AsSsize_t(PyTuple_GET_ITEM((t), (j)))
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(read); j++) {
        Py_ssize_t i = INDEX(read, j);
        PyObject *b = BUFFER(i);
        if (b == NULL) goto bad_index;
        int none = attr_is_none(b, buf.storage);
        if (none < 0) return NULL;
        if (none) {   /* (b.ensure_allocated()) */
            PyObject *r = PyObject_CallMethod(b, "ensure_allocated", NULL);
            if (r == NULL) return NULL;
            Py_DECREF(r);
        }
        if (address_of(b, address_fn, &words[1 + i]) < 0) return NULL;
    }
    for (Py_ssize_t s = 0; s < PyTuple_GET_SIZE(steps); s++) {
        PyObject *step = PyTuple_GET_ITEM(steps, s);
        if (!PyTuple_CheckExact(step) || PyTuple_GET_SIZE(step) != 4) {
            PyErr_SetString(PyExc_TypeError, "buffer_pass: a step is (lends, fresh, last, last_new)");
            return NULL;
        }
        PyObject *lends = PyTuple_GET_ITEM(step, 0), *fresh = PyTuple_GET_ITEM(step, 1);
        PyObject *last = PyTuple_GET_ITEM(step, 2), *last_new = PyTuple_GET_ITEM(step, 3);
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(lends); j++) {
            PyObject *pair = PyTuple_GET_ITEM(lends, j);
            PyObject *o = BUFFER(INDEX(pair, 0)), *k = BUFFER(INDEX(pair, 1));
            if (o == NULL || k == NULL) goto bad_index;
            int none = attr_is_none(o, buf.storage);
            if (none < 0) return NULL;
            if (none && lend_if_able(k, o, readable_fn) < 0) return NULL;   /* (if lendable(k, o): o.take_storage(k)) */
        }
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(fresh); j++) {
            PyObject *f = PyTuple_GET_ITEM(fresh, j);
            Py_ssize_t i = INDEX(f, 0);
            PyObject *b = BUFFER(i);
            if (b == NULL) goto bad_index;
            int none = attr_is_none(b, buf.storage);
            if (none < 0) return NULL;
            if (!none) {   /* (storage lent to it) */
                if (address_of(b, address_fn, &words[1 + i]) < 0) return NULL;
                continue;
            }
            int got = take_pooled(device, b, PyTuple_GET_ITEM(f, 1), PyTuple_GET_ITEM(f, 2), &words[1 + i]);
            if (got < 0) return NULL;
            if (got == 0) {
                PyObject *a = PyObject_CallOneArg(allocate_fn, b);
                if (a == NULL) return NULL;
                words[1 + i] = (uintptr_t)PyLong_AsUnsignedLongLong(a);
                Py_DECREF(a);
                if (PyErr_Occurred()) return NULL;
            }
        }
        for (int input = 1; input >= 0; input--) {
            PyObject *used = input ? last : last_new;
            for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(used); j++) {
                PyObject *b = BUFFER(INDEX(used, j));
                if (b == NULL) goto bad_index;
                if (give_back_if_unread(b, input, readable_fn) < 0) return NULL;
            }
        }
    }
    /* the scalars after the buffers' words, where all are floats (the commonest: a loop's numbers), as
     * float64 bits; False where one is not (the caller writes them) */
    Py_ssize_t ns = scalars ? PyList_GET_SIZE(scalars) : 0;
    for (Py_ssize_t j = 0; j < ns; j++)
        if (!PyFloat_CheckExact(PyList_GET_ITEM(scalars, j))) Py_RETURN_FALSE;
    for (Py_ssize_t j = 0; j < ns; j++) {
        double d = PyFloat_AS_DOUBLE(PyList_GET_ITEM(scalars, j));
        memcpy(&words[1 + n + j], &d, sizeof d);
    }
    Py_RETURN_TRUE;
bad_index:
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_IndexError, "buffer_pass: a buffer number out of range");
    return NULL;
#undef BUFFER
#undef INDEX
}

static PyMethodDef buffer_methods[] = {
    {"setup_buffers", setup_buffers, METH_VARARGS, "setup_buffers(RealView[, Buffer, array_address]): what buffer_pass and release_buffer need from "
     "Python."},
    {"mark_points", mark_points, METH_VARARGS,
     "mark_points(new, points, order): order[pos]._view = the view of new[j] for each (pos, j) of points."},
    {"new_buffers", new_buffers, METH_O,
     "new_buffers(specs) -> [Buffer(device, size, dtype) for (size, dtype, device) in specs] (no storage yet)."},
    {"release_buffer", release_buffer_py, METH_O,
     "release_buffer(b): b.release(), a CPU buffer's storage given back to its device's pool here."},
    {"buffer_pass", buffer_pass, METH_VARARGS,
     "buffer_pass(buffers, read, steps, values, device, address, allocate, readable[, threads, scalars]): "
     "the buffer pass of prepared launches (runtime.prepared); True where it wrote the scalars (all floats)."},
    {NULL},
};

static int add_buffer_functions(PyObject *module) {
    return PyModule_AddFunctions(module, buffer_methods);
}
