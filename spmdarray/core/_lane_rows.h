/* Row parts of split arrays served from their copies, and the view maps and layouts the lane
 * makes (included by _lane.c).
 *
 * A sweep over the rows of a split matrix (``L[i, :i] @ x[:i]`` in a triangular solve)
 * gathers rectangles of rows once and keeps them as copies in the storage
 * (spmdarray.core.element, spmdarray.core.rows); each row part it reads next is then a
 * view of such a copy, with nothing sent.  The Python path finds it through
 * ``reread``, ``held_copy``, ``row_part`` and ``held_part``; ``held_row`` below is that
 * path's usual case, compiled: the same copy, the same entry marked as used, and no
 * answer (the Python path decides) wherever anything differs from that case.  Nothing
 * here is collective: copies change only in collective operations, so every rank
 * answers alike.
 */

static PyTypeObject *ViewMapType;                 /* spmdarray.decomposition.ViewMap */
static Py_ssize_t vm_base, vm_start, vm_axes, vm_shape, vm_hash, vm_bcast; /* its slots */
static PyTypeObject *LayoutType;                  /* spmdarray.decomposition.Layout */
static Py_ssize_t ly_shape, ly_dims, ly_gaxis, ly_gfixed, ly_intervals, ly_hash; /* its slots */
static PyObject *Runs;                            /* element.RUNS: id of a storage -> its element-run record */
static Py_ssize_t Snap = -1;                      /* rows.SNAP */
static PyObject *str_is_device;

/* Item i of tuple t as a Py_ssize_t (t a tuple of Python ints); 0 where it is not one. */
static inline int
tuple_int(PyObject *t, Py_ssize_t i, Py_ssize_t *out)
{
    if (!PyTuple_CheckExact(t) || i < 0 || i >= PyTuple_GET_SIZE(t))
        return 0;
    PyObject *v = PyTuple_GET_ITEM(t, i);
    if (!PyLong_CheckExact(v))
        return 0;
    *out = PyLong_AsSsize_t(v);
    if (*out == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    return 1;
}

/* Whether the axes tuple ``axes`` is ((a, 1), (a + 1, 1), ...) for its n entries. */
static int
unit_axes(PyObject *axes, Py_ssize_t a, Py_ssize_t n)
{
    if (!PyTuple_CheckExact(axes) || PyTuple_GET_SIZE(axes) != n)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t ax, step;
        PyObject *p = PyTuple_GET_ITEM(axes, i);
        if (!tuple_int(p, 0, &ax) || !tuple_int(p, 1, &step) || PyTuple_GET_SIZE(p) != 2 || ax != a + i || step != 1)
            return 0;
    }
    return 1;
}

/* Whether the first n items of the tuples a and b are equal ints (``a[:n] == b[:n]``). */
static int
same_prefix(PyObject *a, PyObject *b, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t x, y;
        if (!tuple_int(a, i, &x) || !tuple_int(b, i, &y) || x != y)
            return 0;
    }
    return 1;
}

/* rows.row_part(vm): 1 with part = (row axis, row, first column, column stop) when the view
 * map vm is a non-empty prefix or suffix (within Snap columns) of one row along the last base
 * axis of a base of 2 or more axes, step 1; 0 otherwise (or for a map of another form). */
static int
row_part_of(PyObject *vm, Py_ssize_t part[4])
{
    PyObject *base = SLOT(vm, vm_base), *start = SLOT(vm, vm_start), *axes = SLOT(vm, vm_axes),
             *shape = SLOT(vm, vm_shape);
    if (base == NULL || start == NULL || axes == NULL || shape == NULL || !PyTuple_CheckExact(base))
        return 0;
    Py_ssize_t b = PyTuple_GET_SIZE(base) - 1, c0, n, r, width;
    if (b < 1 || !unit_axes(axes, b, 1) || !tuple_int(start, b, &c0) || !tuple_int(shape, 0, &n) ||
        !tuple_int(start, b - 1, &r) || !tuple_int(base, b, &width))
        return 0;
    Py_ssize_t c1 = c0 + n;
    if (c1 == c0 || (c0 > Snap && c1 < width - Snap))
        return 0;
    part[0] = b - 1;
    part[1] = r;
    part[2] = c0;
    part[3] = c1;
    return 1;
}

/* rows.held_part(copies, version, vm, part): the newest current copy holding the row part,
 * and the part's index in it (a new tuple), as *entry and *index (new references); 1 found, 0 not
 * (or a copy of another form: the Python path decides), -1 on an error. */
static int
held_part_of(PyObject *copies, PyObject *version, PyObject *vm, const Py_ssize_t part[4], PyObject **entry,
             PyObject **index)
{
    Py_ssize_t a = part[0], r = part[1], c0 = part[2], c1 = part[3], b = a + 1;
    PyObject *base = SLOT(vm, vm_base), *fixed = SLOT(vm, vm_start);
    PyObject *cm, *e, *found = NULL;
    Py_ssize_t pos = 0, fk = -1, fj = 0;
    /* (forwards, keeping the last match: the newest, as the Python path's reversed walk finds first) */
    while (PyDict_Next(copies, &pos, &cm, &e)) {
        if (Py_TYPE(cm) != ViewMapType || !PyList_CheckExact(e) || PyList_GET_SIZE(e) < 3)
            return 0;
        PyObject *ev = PyList_GET_ITEM(e, 0);
        int cur = ev == version ? 1 : PyObject_RichCompareBool(ev, version, Py_EQ);
        if (cur < 0)
            return -1;
        PyObject *cb = SLOT(cm, vm_base), *cs = SLOT(cm, vm_start), *ca = SLOT(cm, vm_axes), *csh = SLOT(cm, vm_shape);
        if (!cur || cb == NULL || cs == NULL || ca == NULL || csh == NULL)
            continue;
        int sb = cb == base ? 1 : PyObject_RichCompareBool(cb, base, Py_EQ);
        if (sb < 0)
            return -1;
        if (!sb || !same_prefix(cs, fixed, a))
            continue;
        Py_ssize_t sa, sbc, n0, n1;
        if (!tuple_int(cs, b, &sbc))
            continue;
        Py_ssize_t j = c0 - sbc;
        if (unit_axes(ca, a, 2)) {
            if (tuple_int(cs, a, &sa) && tuple_int(csh, 0, &n0) && tuple_int(csh, 1, &n1)) {
                Py_ssize_t k = r - sa;
                if (0 <= k && k < n0 && j >= 0 && j + c1 - c0 <= n1) {
                    found = e;
                    fk = k;
                    fj = j;
                }
            }
        }
        else if (unit_axes(ca, b, 1)) {
            if (tuple_int(cs, a, &sa) && sa == r && tuple_int(csh, 0, &n0) && j >= 0 && j + c1 - c0 <= n0) {
                found = e;
                fk = -1;
                fj = j;
            }
        }
    }
    if (found == NULL)
        return 0;
    Py_INCREF(found); /* (held before anything is allocated: nothing may drop it from the table meanwhile) */
    PyObject *lo = PyLong_FromSsize_t(fj), *hi = PyLong_FromSsize_t(fj + c1 - c0);
    PyObject *sl = lo && hi ? PySlice_New(lo, hi, NULL) : NULL;
    Py_XDECREF(lo);
    Py_XDECREF(hi);
    *index = NULL;
    if (sl != NULL && fk >= 0) {
        PyObject *k = PyLong_FromSsize_t(fk);
        *index = k ? PyTuple_Pack(2, k, sl) : NULL;
        Py_XDECREF(k);
    }
    else if (sl != NULL)
        *index = PyTuple_Pack(1, sl);
    Py_XDECREF(sl);
    if (*index == NULL) {
        Py_DECREF(found);
        return -1;
    }
    *entry = found;
    return 1;
}

/* The storage of x when x is a split array (or view) that this rank does not hold whole: a
 * Storage (not deferred), x._loc (id of the storage, None, None, None), x._map a ViewMap;
 * and (``copied``) one whose elements a current copy may serve: with copies, no message in
 * flight and no deferred reader.  NULL (no error) otherwise.  Borrowed. */
static PyObject *
split_storage(PyObject *x, int copied)
{
    if (ViewMapType == NULL)
        return NULL;
    PyObject *s = SLOT(x, a_s), *c = SLOT(x, a_loc), *vm = SLOT(x, a_map);
    if (s == NULL || Py_TYPE(s) != StorageType || c == NULL || !PyTuple_CheckExact(c) || PyTuple_GET_SIZE(c) != 4 ||
        PyTuple_GET_ITEM(c, 2) != Py_None || vm == NULL || Py_TYPE(vm) != ViewMapType)
        return NULL;
    PyObject *id = PyTuple_GET_ITEM(c, 0);
    if (!PyLong_CheckExact(id) || PyLong_AsVoidPtr(id) != (void *)s) {
        PyErr_Clear();
        return NULL;
    }
    if (!copied)
        return s;
    PyObject *copies = SLOT(s, s_copies), *fl = SLOT(s, s_flights);
    if (copies == NULL || !PyDict_CheckExact(copies) || PyDict_GET_SIZE(copies) == 0 || fl == NULL ||
        !PyList_CheckExact(fl) || PyList_GET_SIZE(fl) != 0 || SLOT(s, s_version) == NULL)
        return NULL;
    /* (``x._st``: deferred arrays reading this storage are computed first, in Python) */
    int r = PyDict_GET_SIZE(Readers) ? PyDict_Contains(Readers, id) : 0;
    if (r != 0) {
        PyErr_Clear();
        return NULL;
    }
    return s;
}

/* held_row(x): the copy of x, a split view that this rank does not hold whole, when it is a
 * row part that a current copy of its storage holds (``reread(x)`` through ``held_copy``'s
 * row-part look-up: the entry marked as used, NumPy's view of its copy returned, a new
 * reference); NULL with no error in every other case, NULL with an error on a failure. */
static PyObject *
held_row(PyObject *x)
{
    if (Snap < 0 || Config == NULL || SLOT(Config, c_whole_lane) != Py_True)
        return NULL;
    PyObject *s = split_storage(x, 1);
    PyObject *rb = SLOT(Config, c_replicate_below);
    if (s == NULL || rb == NULL || !PyLong_CheckExact(rb))
        return NULL;
    PyObject *vm = SLOT(x, a_map), *copies = SLOT(s, s_copies), *ver = SLOT(s, s_version);
    Py_ssize_t part[4];
    if (!row_part_of(vm, part))
        return NULL;
    Py_ssize_t below = PyLong_AsSsize_t(rb);
    if (below == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return NULL;
    }
    if (part[3] - part[2] >= below)
        return NULL; /* (``reread``: the view has replicate_below elements or more) */
    PyObject *dev = PyObject_GetAttr(SLOT(s, s_be), str_is_device);
    if (dev == NULL)
        return NULL;
    Py_DECREF(dev);
    if (dev != Py_False)
        return NULL;
    PyObject *entry, *index;
    Py_INCREF(s);
    int r = held_part_of(copies, ver, vm, part, &entry, &index);
    PyObject *out = NULL;
    if (r > 0) {
        if (PyList_SetItem(entry, 2, Py_NewRef(Py_True)) == 0) {
            PyObject *arr = PyList_GET_ITEM(entry, 1);
            out = Py_TYPE(arr) == NpArrayType ? PyObject_GetItem(arr, index) : NULL;
        }
        Py_DECREF(entry);
        Py_DECREF(index);
    }
    Py_DECREF(s);
    return out;
}

#define MAX_AXES 32

/* The element at base index ``base`` (nb axes) from the newest current copy of storage s
 * that holds it as a stretch of a row or a rectangle of rows (``element._in_copies``); NULL
 * with no error where none does (or a copy of another form comes first: the Python path
 * decides), NULL with an error on a failure. */
static PyObject *
element_in_copies(PyObject *s, const Py_ssize_t *base, Py_ssize_t nb)
{
    PyObject *copies = SLOT(s, s_copies), *version = SLOT(s, s_version);
    PyObject *cm, *e, *found = NULL;
    Py_ssize_t pos = 0, fk = -1, fj = 0, b = nb - 1, a = nb - 2;
    if (b < 0)
        return NULL;
    while (PyDict_Next(copies, &pos, &cm, &e)) {
        if (Py_TYPE(cm) != ViewMapType || !PyList_CheckExact(e) || PyList_GET_SIZE(e) < 2)
            return NULL;
        PyObject *ev = PyList_GET_ITEM(e, 0);
        int cur = ev == version ? 1 : PyObject_RichCompareBool(ev, version, Py_EQ);
        if (cur < 0)
            return NULL;
        if (!cur)
            continue;
        PyObject *cs = SLOT(cm, vm_start), *ca = SLOT(cm, vm_axes), *csh = SLOT(cm, vm_shape);
        if (cs == NULL || ca == NULL || csh == NULL || !PyTuple_CheckExact(cs) || PyTuple_GET_SIZE(cs) != nb) {
            found = NULL; /* (a copy of another form: the Python path) */
            continue;
        }
        Py_ssize_t sb, sa, n0, n1, v;
        int fixed = 1;
        if (unit_axes(ca, b, 1)) {
            for (Py_ssize_t i = 0; i < b && fixed; i++)
                fixed = tuple_int(cs, i, &v) && v == base[i];
            if (fixed && tuple_int(cs, b, &sb) && tuple_int(csh, 0, &n0) && 0 <= base[b] - sb && base[b] - sb < n0) {
                found = e;
                fk = -1;
                fj = base[b] - sb;
            }
        }
        else if (a >= 0 && unit_axes(ca, a, 2)) {
            for (Py_ssize_t i = 0; i < a && fixed; i++)
                fixed = tuple_int(cs, i, &v) && v == base[i];
            if (fixed && tuple_int(cs, a, &sa) && tuple_int(cs, b, &sb) && tuple_int(csh, 0, &n0) &&
                tuple_int(csh, 1, &n1) && 0 <= base[a] - sa && base[a] - sa < n0 && 0 <= base[b] - sb &&
                base[b] - sb < n1) {
                found = e;
                fk = base[a] - sa;
                fj = base[b] - sb;
            }
        }
        else {
            found = NULL; /* (another form, newer than the matches so far: ``_index_in``, in Python) */
        }
    }
    if (found == NULL)
        return NULL;
    PyObject *arr = PyList_GET_ITEM(found, 1);
    if (Py_TYPE(arr) != NpArrayType)
        return NULL;
    Py_INCREF(arr); /* (held before anything is allocated) */
    PyObject *j = PyLong_FromSsize_t(fj), *k = fk >= 0 ? PyLong_FromSsize_t(fk) : NULL;
    PyObject *index = j == NULL ? NULL : fk >= 0 ? (k ? PyTuple_Pack(2, k, j) : NULL) : Py_NewRef(j);
    Py_XDECREF(j);
    Py_XDECREF(k);
    if (index == NULL) {
        Py_DECREF(arr);
        return NULL;
    }
    PyObject *out = PyObject_GetItem(arr, index);
    Py_DECREF(arr);
    Py_DECREF(index);
    return out;
}

/* The element-run record of storage s (whose id is ``id``) in element.RUNS, a new reference;
 * NULL with no error where it has none (or one of an earlier storage of that id). */
static PyObject *
runs_record(PyObject *s, PyObject *id)
{
    PyObject *h = PyDict_GetItemWithError(Runs, id); /* borrowed */
    if (h == NULL || !PyList_CheckExact(h) || PyList_GET_SIZE(h) != 5)
        return NULL;
    Py_INCREF(h);
    PyObject *who = PyObject_CallNoArgs(PyList_GET_ITEM(h, 0)); /* (the weak reference) */
    if (who == s) {
        Py_DECREF(who);
        return h;
    }
    Py_XDECREF(who);
    Py_DECREF(h);
    return NULL;
}

/* ``element.read_element``'s first step: the element at base index ``base`` (nb axes) from
 * the current run of the record h (``_on_run``); NULL with no error where the run does not
 * hold it, NULL with an error on a failure.  The caller counts a read it serves in h. */
static PyObject *
element_on_run(PyObject *h, PyObject *s, const Py_ssize_t *base, Py_ssize_t nb)
{
    PyObject *run = PyList_GET_ITEM(h, 3);
    if (!PyTuple_CheckExact(run) || PyTuple_GET_SIZE(run) != 5)
        return NULL; /* (None: no run yet) */
    int cur = PyObject_RichCompareBool(PyTuple_GET_ITEM(run, 0), SLOT(s, s_version), Py_EQ);
    if (cur <= 0)
        return NULL;
    PyObject *rs = PyTuple_GET_ITEM(run, 1), *rd = PyTuple_GET_ITEM(run, 2);
    Py_ssize_t n, t = -1;
    if (!tuple_int(run, 3, &n))
        return NULL;
    for (Py_ssize_t i = 0; i < nb; i++) {
        Py_ssize_t a, d;
        if (!tuple_int(rs, i, &a) || !tuple_int(rd, i, &d))
            return NULL;
        if (d) {
            Py_ssize_t diff = base[i] - a, q = diff / d, r = diff % d;
            if (r && ((r < 0) != (d < 0))) { /* (Python's divmod: floor division) */
                q -= 1;
                r += d;
            }
            if (r || q < 0 || q >= n || (t >= 0 && q != t))
                return NULL;
            t = q;
        }
        else if (base[i] != a)
            return NULL;
    }
    return t >= 0 ? PySequence_GetItem(PyTuple_GET_ITEM(run, 4), t) : NULL;
}

/* split_getitem(x, key): ``x[key]`` for a split array x that this rank does not hold whole
 * (split_storage) and a key of Python ints and slices, one per axis at most (the rest whole):
 * an element a current copy holds (``read_at``, served by ``element._in_copies``; only where
 * no element run of the storage is kept, whose reads count), or the view
 * ``ndarray.__getitem__`` makes (the map composed as ``ViewMap.getitem`` composes it, the
 * layout left to be made when read, x's ``_loc`` kept); SLOW for every other case. */
static PyObject *
split_getitem(PyObject *x, PyObject *key)
{
    PyObject *s = split_storage(x, 0);
    if (s == NULL)
        return Py_NewRef(Slow);
    PyObject *vm = SLOT(x, a_map);
    PyObject *vbase = SLOT(vm, vm_base), *vstart = SLOT(vm, vm_start), *vaxes = SLOT(vm, vm_axes),
             *vshape = SLOT(vm, vm_shape);
    if (vbase == NULL || vstart == NULL || vaxes == NULL || vshape == NULL || !PyTuple_CheckExact(vbase) ||
        !PyTuple_CheckExact(vshape) || !PyTuple_CheckExact(vaxes))
        return Py_NewRef(Slow);
    Py_ssize_t nd = PyTuple_GET_SIZE(vshape), nb = PyTuple_GET_SIZE(vbase);
    PyObject *const *keys = PyTuple_CheckExact(key) ? &PyTuple_GET_ITEM(key, 0) : &key;
    Py_ssize_t nk = PyTuple_CheckExact(key) ? PyTuple_GET_SIZE(key) : 1;
    if (nd == 0 || nk > nd || nb > MAX_AXES || PyTuple_GET_SIZE(vaxes) != nd)
        return Py_NewRef(Slow);
    Py_ssize_t start[MAX_AXES], ax[MAX_AXES], st[MAX_AXES], sh[MAX_AXES];
    Py_ssize_t nv = 0, ints = 0;
    for (Py_ssize_t i = 0; i < nb; i++)
        if (!tuple_int(vstart, i, &start[i]))
            return Py_NewRef(Slow);
    for (Py_ssize_t v = 0; v < nd; v++) {
        PyObject *p = PyTuple_GET_ITEM(vaxes, v);
        Py_ssize_t b, step, n;
        if (!tuple_int(p, 0, &b) || !tuple_int(p, 1, &step) || PyTuple_GET_SIZE(p) != 2 || b < 0 || b >= nb ||
            !tuple_int(vshape, v, &n))
            return Py_NewRef(Slow); /* (a new axis or a broadcast one: the Python path) */
        PyObject *k = v < nk ? keys[v] : NULL;
        if (k != NULL && PyLong_CheckExact(k)) {
            Py_ssize_t i = PyLong_AsSsize_t(k);
            if (i == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                return Py_NewRef(Slow);
            }
            if (i < 0)
                i += n;
            if (i < 0 || i >= n)
                return Py_NewRef(Slow); /* (NumPy's IndexError, from the Python path) */
            start[b] += i * step;
            ints++;
        }
        else if (k == NULL || Py_TYPE(k) == &PySlice_Type) {
            Py_ssize_t lo = 0, hi = n, s1 = 1, cnt = n;
            if (k != NULL) {
                if (PySlice_Unpack(k, &lo, &hi, &s1) < 0) {
                    PyErr_Clear();
                    return Py_NewRef(Slow);
                }
                cnt = PySlice_AdjustIndices(n, &lo, &hi, s1);
            }
            if (cnt)
                start[b] += lo * step;
            ax[nv] = b;
            st[nv] = step * s1;
            sh[nv] = cnt;
            nv++;
        }
        else
            return Py_NewRef(Slow);
    }
    if (ints == nd) {
        /* One element: served by a current copy, or by the Python path (a collective). */
        if (Runs == NULL || split_storage(x, 1) == NULL)
            return Py_NewRef(Slow);
        Py_INCREF(s);
        PyObject *h = runs_record(s, PyTuple_GET_ITEM(SLOT(x, a_loc), 0)), *out = NULL;
        if (h != NULL)
            out = element_on_run(h, s, start, nb);
        if (out == NULL && !PyErr_Occurred())
            out = element_in_copies(s, start, nb);
        if (out != NULL && h != NULL) {
            /* (a read served: the record counts it, as the Python path does before looking) */
            PyObject *count = PyNumber_Add(PyList_GET_ITEM(h, 4), one);
            if (count == NULL || PyList_SetItem(h, 4, count) < 0)
                Py_CLEAR(out);
        }
        Py_XDECREF(h);
        Py_DECREF(s);
        return out != NULL || PyErr_Occurred() ? out : Py_NewRef(Slow);
    }
    /* A view: ViewMap(base_shape, start, axes, shape), its layout made when first read. */
    PyObject *tstart = PyTuple_New(nb), *taxes = PyTuple_New(nv), *tshape = PyTuple_New(nv);
    PyObject *m = NULL, *out = NULL;
    if (tstart == NULL || taxes == NULL || tshape == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < nb; i++) {
        PyObject *o = PyLong_FromSsize_t(start[i]);
        if (o == NULL)
            goto done;
        PyTuple_SET_ITEM(tstart, i, o);
    }
    for (Py_ssize_t i = 0; i < nv; i++) {
        PyObject *n = PyLong_FromSsize_t(sh[i]);
        if (n == NULL)
            goto done;
        PyTuple_SET_ITEM(tshape, i, n);
        PyObject *p = Py_BuildValue("(nn)", ax[i], st[i]);
        if (p == NULL)
            goto done;
        PyTuple_SET_ITEM(taxes, i, p);
    }
    m = ViewMapType->tp_alloc(ViewMapType, 0);
    out = m ? ArrayType->tp_alloc(ArrayType, 0) : NULL;
    if (out == NULL)
        goto done;
    put(m, vm_base, vbase);
    SLOT(m, vm_start) = tstart;
    SLOT(m, vm_axes) = taxes;
    SLOT(m, vm_shape) = tshape;
    put(m, vm_hash, Py_None);
    put(m, vm_bcast, Py_None);
    tstart = taxes = tshape = NULL;
    put(out, a_s, s);
    SLOT(out, a_map) = m;
    m = NULL;
    put(out, a_lay, Py_None);
    put(out, a_loc, SLOT(x, a_loc));
    put(out, a_pend, Py_None);
done:
    Py_XDECREF(tstart);
    Py_XDECREF(taxes);
    Py_XDECREF(tshape);
    Py_XDECREF(m);
    return out;
}

/* The kind of a replicated result of a shape not seen yet, as ``whole._kind`` makes it for
 * a small one (a new ViewMap and a replicated Layout, written out), stored in whole._KINDS
 * (cleared at MAX_KINDS entries, whole.MAX_KINDS, as wrap clears it); a new reference, or NULL with no error
 * where Python decides (an empty shape, objects, a result not small, the classes not known
 * yet), NULL with an error on a failure. */
#define MAX_KINDS 16384
static PyObject *
small_kind(PyObject *ctx, PyObject *dtype, PyObject *res, PyObject *shape)
{
    if (ViewMapType == NULL || LayoutType == NULL || NpLayoutOk <= 0 || !PyTuple_CheckExact(shape))
        return NULL;
    Py_ssize_t nd = PyTuple_GET_SIZE(shape), size = 1;
    int k = dtype_kind(res);
    if (k == 0)
        return NULL;
    PyObject *rb = SLOT(Config, c_replicate_below);
    if (nd == 0 || k == 'O' || k == 'V' || rb == NULL || !PyLong_CheckExact(rb))
        return NULL; /* (``_split``, or a structured dtype that may hold objects: Python) */
    for (Py_ssize_t i = 0; i < nd; i++)
        size *= NP_FIELDS(res)->dimensions[i];
    Py_ssize_t below = PyLong_AsSsize_t(rb);
    if (below == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return NULL;
    }
    if (size >= below)
        return NULL;
    PyObject *nprocs = PyObject_GetAttr(ctx, str_size);
    if (nprocs == NULL)
        return NULL;
    PyObject *zeros = PyTuple_New(nd), *axes = PyTuple_New(nd), *nones = PyTuple_New(nd);
    PyObject *dims = PyTuple_Pack(1, nprocs), *none1 = PyTuple_Pack(1, Py_None), *psize = PyLong_FromSsize_t(size);
    PyObject *vmap = NULL, *lay = NULL, *geometry = NULL, *kind = NULL;
    Py_DECREF(nprocs);
    if (!zeros || !axes || !nones || !dims || !none1 || !psize)
        goto done;
    for (Py_ssize_t b = 0; b < nd; b++) {
        PyObject *ax = Py_BuildValue("(ni)", b, 1);
        if (ax == NULL)
            goto done;
        PyTuple_SET_ITEM(zeros, b, Py_NewRef(zero));
        PyTuple_SET_ITEM(axes, b, ax);
        PyTuple_SET_ITEM(nones, b, Py_NewRef(Py_None));
    }
    if ((vmap = ViewMapType->tp_alloc(ViewMapType, 0)) == NULL || (lay = LayoutType->tp_alloc(LayoutType, 0)) == NULL)
        goto done;
    put(vmap, vm_base, shape);
    put(vmap, vm_start, zeros);
    put(vmap, vm_axes, axes);
    put(vmap, vm_shape, shape);
    put(vmap, vm_hash, Py_None);
    put(vmap, vm_bcast, Py_None);
    put(lay, ly_shape, shape);
    put(lay, ly_dims, dims);
    put(lay, ly_gaxis, none1);
    put(lay, ly_gfixed, none1);
    put(lay, ly_intervals, nones);
    put(lay, ly_hash, Py_None);
    if ((geometry = PyTuple_Pack(4, zeros, shape, zeros, Py_None)) == NULL)
        goto done;
    kind = PyTuple_Pack(11, ctx, dtype, Py_True, lay, vmap, lay, geometry, Py_True, Py_True, rb, psize);
    if (kind != NULL) {
        if (PyDict_GET_SIZE(Kinds) >= MAX_KINDS)
            PyDict_Clear(Kinds);
        if (PyDict_SetItem(Kinds, shape, kind) < 0)
            Py_CLEAR(kind);
    }
done:
    Py_XDECREF(zeros);
    Py_XDECREF(axes);
    Py_XDECREF(nones);
    Py_XDECREF(dims);
    Py_XDECREF(none1);
    Py_XDECREF(psize);
    Py_XDECREF(vmap);
    Py_XDECREF(lay);
    Py_XDECREF(geometry);
    return kind;
}

/* hash_method(self): ``ViewMap.__hash__`` and ``Layout.__hash__`` (as compiled methods over
 * the Python ones): the hash each caches in its ``_hash`` slot, with no Python frame (the
 * engine's dictionaries are keyed by maps and layouts); SLOW (the Python method, which
 * computes and caches it) where it is not cached yet or for another class. */
static PyObject *
hash_method(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 1)
        return Py_NewRef(Slow);
    PyObject *self = args[0], *h = NULL;
    if (ViewMapType != NULL && Py_TYPE(self) == ViewMapType)
        h = SLOT(self, vm_hash);
    else if (LayoutType != NULL && Py_TYPE(self) == LayoutType)
        h = SLOT(self, ly_hash);
    return Py_NewRef(h != NULL && PyLong_CheckExact(h) ? h : Slow);
}

/* init_rows(ViewMap, Layout, snap, runs): the view map and layout classes, rows.SNAP and
 * element.RUNS.  Not collective. */
static PyObject *
init_rows(PyObject *mod, PyObject *args)
{
    PyObject *vmtype, *laytype, *runs;
    Py_ssize_t snap;
    if (!PyArg_ParseTuple(args, "O!O!nO!", &PyType_Type, &vmtype, &PyType_Type, &laytype, &snap, &PyDict_Type, &runs))
        return NULL;
    if (slot_offset(vmtype, "base_shape", &vm_base) || slot_offset(vmtype, "start", &vm_start) ||
        slot_offset(vmtype, "axes", &vm_axes) || slot_offset(vmtype, "shape", &vm_shape) ||
        slot_offset(vmtype, "_hash", &vm_hash) || slot_offset(vmtype, "_bcast", &vm_bcast) ||
        slot_offset(laytype, "shape", &ly_shape) || slot_offset(laytype, "dims", &ly_dims) ||
        slot_offset(laytype, "gaxis", &ly_gaxis) || slot_offset(laytype, "gfixed", &ly_gfixed) ||
        slot_offset(laytype, "intervals", &ly_intervals) || slot_offset(laytype, "_hash", &ly_hash))
        return NULL;
    Py_XSETREF(LayoutType, (PyTypeObject *)Py_NewRef(laytype));
    Py_XSETREF(Runs, Py_NewRef(runs));
    if (str_is_device == NULL && (str_is_device = PyUnicode_InternFromString("is_device")) == NULL)
        return NULL;
    Py_XSETREF(ViewMapType, (PyTypeObject *)Py_NewRef(vmtype));
    Snap = snap;
    Py_RETURN_NONE;
}
