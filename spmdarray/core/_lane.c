/* The whole-array lane's hot paths in C (spmdarray.core._lane).
 *
 * The whole-array lane (spmdarray.core.whole) runs an operation whose arrays every rank
 * holds whole as NumPy's own call on each rank's copy.  This module computes its usual
 * cases: wrapping NumPy's result (whole.wrap), the binary, reflected, in-place and
 * comparison operators (x ** 2 as NumPy's square too), x[key] and x[key] = v with keys of
 * integers, slices and None, x[k] for an integer or boolean array k, x.T, ufunc calls and
 * the pure registered functions without array keywords (sequences of arrays too:
 * np.hstack((a, b))), the full reductions without arguments, and @ between two arrays; and, on
 * split arrays this rank does not hold whole, views, elements that a current copy holds and
 * operators on row parts that one holds (_lane_rows.h).  Each function does exactly
 * what the Python code does in that case, and hands every other case to it (a result
 * of a shape not seen yet, a NumPy result that is not a C-contiguous array of its own,
 * an array off the lane, an operand of another kind, a storage with deferred readers):
 * it returns whole.SLOW, or calls the Python method it wraps.  The Python code stays
 * the reference; with SPMDARRAY_LANE_EXTENSION=0 (config.lane_extension) it runs alone,
 * and the test suite runs both ways.  Nothing here is collective: the lane computes the
 * same thing on every rank and sends nothing.
 *
 * The objects it makes are the Python classes' own (ndarray, Storage): allocated by
 * their type, their __slots__ stored at the offsets of the slots' member descriptors,
 * read once by init() and register().
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#ifndef Py_T_OBJECT_EX
#define Py_T_OBJECT_EX T_OBJECT_EX
#endif

static PyTypeObject *ArrayType;   /* spmdarray.ndarray */
static PyTypeObject *StorageType; /* spmdarray.core.storage.Storage */
static PyTypeObject *NpArrayType; /* numpy.ndarray */
static PyObject *Kinds;           /* whole._KINDS: shape -> kind tuple */
static PyObject *Config;          /* spmdarray.settings.config */
static PyObject *PyWrap;          /* whole.wrap, the reference and fallback */
static PyObject *NumpyScalars;    /* frozenset of NumPy's scalar types */
static PyObject *Slow;            /* whole.SLOW: "not done, take the Python path" */
static PyObject *Readers;         /* thunk.READERS: id of a storage -> deferred arrays reading it */
static PyObject *Numbers;         /* whole.NUMBERS: scalar types written into the copy by NumPy */
static PyObject *MayShare;        /* numpy.may_share_memory (its C function, without NumPy's dispatch) */
static PyObject *PermType;        /* whole._Perm: the "key" of a transposed view */
static PyObject *Square, *Reciprocal, *Sqrt; /* NumPy's ufuncs for ``x ** 2``, ``x ** -1``, ``x ** 0.5`` */
static PyObject *NpInts;          /* frozenset of NumPy's integer scalar types */
#define MAX_PERMS 33
static PyObject *Perms[MAX_PERMS]; /* the reversed axes of each ndim, as _Perm (made when first asked) */
static Py_ssize_t MinElide;       /* operators.MIN_ELIDE_BYTES */

static Py_ssize_t a_s, a_map, a_lay, a_loc, a_pend;
static Py_ssize_t s_ctx, s_be, s_layout, s_dtype, s_alloc, s_origin, s_ghost, s_version, s_halo_valid, s_views,
    s_flights, s_exposed, s_copies;
static Py_ssize_t c_whole_lane, c_replicate_below, c_fuse_replicated_min, c_fuse, c_fuse_min_size;

static PyObject *str_shape, *str_dtype, *str_flags, *str_c_contiguous, *str_owndata, *str_writeable, *str_nbytes,
    *str_kind, *str_copy, *str_map, *str_T, *str_ndim, *str_size;
static PyObject *zero, *one;

#define SLOT(o, off) (*(PyObject **)((char *)(o) + (off)))

/* NumPy's array object as its headers lay it out (``PyArrayObject_fields``, the same from NumPy
 * 1.7 to 2.x): ``wrap`` reads a result's flags and dtype from it, with no attribute calls.
 * init() checks this layout against probe arrays and reads the attributes instead where it
 * differs (NpLayoutOk 0). */
typedef struct {
    PyObject_HEAD
    char *data;
    int nd;
    Py_ssize_t *dimensions;
    Py_ssize_t *strides;
    PyObject *base;
    PyObject *descr;
    int flags;
} NpFields;
#define NP_C_CONTIGUOUS 0x0001
#define NP_OWNDATA 0x0004
#define NP_WRITEABLE 0x0400
#define NP_FIELDS(a) ((NpFields *)(a))
static int NpLayoutOk;

/* An entry point called with the wrong number of arguments raises TypeError. */
#define EXPECT_ARGS(n, signature)                                                                                     \
    if (nargs != (n)) {                                                                                              \
        PyErr_Format(PyExc_TypeError, signature " takes %d arguments (%zd given)", (n), nargs);                     \
        return NULL;                                                                                                 \
    }

static int quiet_storage(PyObject *x, PyObject *s);
static int dtype_kind(PyObject *arr);
static PyObject *small_kind(PyObject *ctx, PyObject *dtype, PyObject *res, PyObject *shape);
static int bump(PyObject *s);
static void forget_kinds(void);
static int split_fuses(PyObject *v);

static int
slot_offset(PyObject *cls, const char *name, Py_ssize_t *off)
{
    PyObject *d = PyObject_GetAttrString(cls, name);
    if (d == NULL)
        return -1;
    if (!Py_IS_TYPE(d, &PyMemberDescr_Type) || ((PyMemberDescrObject *)d)->d_member->type != Py_T_OBJECT_EX) {
        PyErr_Format(PyExc_TypeError, "spmdarray.core._lane: %R.%s is not a __slots__ member", cls, name);
        Py_DECREF(d);
        return -1;
    }
    *off = ((PyMemberDescrObject *)d)->d_member->offset;
    Py_DECREF(d);
    return 0;
}

/* Store a new reference to v in a fresh object's empty slot. */
static inline void
put(PyObject *o, Py_ssize_t off, PyObject *v)
{
    Py_INCREF(v);
    SLOT(o, off) = v;
}

/* Whether NumPy's arrays have the layout of NpFields here: a new (2, 3) float64 array and a
 * strided view of it are read through it and through their attributes, which must agree.
 * 1 yes, 0 no (the attributes are read then), -1 on an error. */
static int
np_layout_ok(void)
{
    PyObject *a = PyObject_CallFunction((PyObject *)NpArrayType, "((ii))", 2, 3);
    if (a == NULL)
        return -1;
    PyObject *step = PyLong_FromLong(2);
    PyObject *sl = step ? PySlice_New(NULL, NULL, step) : NULL;
    PyObject *key = sl ? PyTuple_Pack(2, Py_Ellipsis, sl) : NULL;
    PyObject *v = key ? PyObject_GetItem(a, key) : NULL; /* a[..., ::2] */
    Py_XDECREF(step);
    Py_XDECREF(sl);
    Py_XDECREF(key);
    int ok = -1;
    PyObject *da = PyObject_GetAttr(a, str_dtype), *dv = v ? PyObject_GetAttr(v, str_dtype) : NULL;
    if (v != NULL && da != NULL && dv != NULL) {
        NpFields *fa = NP_FIELDS(a), *fv = NP_FIELDS(v);
        int want = NP_C_CONTIGUOUS | NP_OWNDATA | NP_WRITEABLE;
        ok = Py_TYPE(a) == NpArrayType && Py_TYPE(v) == NpArrayType && fa->nd == 2 && fa->dimensions[0] == 2 &&
             fa->dimensions[1] == 3 && fa->strides[1] == 8 && fa->base == NULL && fa->descr == da &&
             (fa->flags & want) == want && fv->nd == 2 && fv->dimensions[1] == 2 && fv->base == a &&
             fv->descr == dv && (fv->flags & (NP_C_CONTIGUOUS | NP_OWNDATA)) == 0 && (fv->flags & NP_WRITEABLE);
    }
    Py_XDECREF(da);
    Py_XDECREF(dv);
    Py_XDECREF(v);
    Py_DECREF(a);
    return ok;
}


/* NumPy's dtype object as its headers lay it out: ``kind`` (a char) after the type pointer, in
 * NumPy 1.x and 2.x; ``elsize`` an npy_intp at DESCR_ELSIZE_2 in 2.x, an int at DESCR_ELSIZE_1
 * in 1.x.  descr_layout() finds which, on probe dtypes: 2 or 1, 0 for neither (the attributes
 * are read then), -1 on an error. */
#define DESCR_KIND (sizeof(PyObject) + sizeof(void *))
#define DESCR_ELSIZE_2 (DESCR_KIND + 8 + 8)
#define DESCR_ELSIZE_1 (DESCR_KIND + 8)
static int DescrLayout;

static int
descr_layout(void)
{
    static const struct { const char *code; Py_ssize_t size; char kind; } probes[] = {
        {"f8", 8, 'f'}, {"i2", 2, 'i'}, {"c16", 16, 'c'}, {"U7", 28, 'U'}, {"V3", 3, 'V'}, {"u1", 1, 'u'}, {"?", 1, 'b'},
    };
    int v2 = 1, v1 = 1;
    for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
        PyObject *a = PyObject_CallFunction((PyObject *)NpArrayType, "((i)s)", 1, probes[i].code);
        if (a == NULL)
            return -1;
        PyObject *d = PyObject_GetAttr(a, str_dtype);
        Py_DECREF(a);
        if (d == NULL)
            return -1;
        const char *raw = (const char *)d;
        if (raw[DESCR_KIND] != probes[i].kind)
            v2 = v1 = 0;
        if (*(const Py_ssize_t *)(raw + DESCR_ELSIZE_2) != probes[i].size)
            v2 = 0;
        if (*(const int *)(raw + DESCR_ELSIZE_1) != probes[i].size)
            v1 = 0;
        Py_DECREF(d);
    }
    return v2 ? 2 : v1 ? 1 : 0;
}

/* The item size of an exact NumPy array read from its dtype's fields, or -1 where their
 * layout is not known (the caller reads attributes). */
static inline Py_ssize_t
np_itemsize(PyObject *arr)
{
    if (NpLayoutOk <= 0 || DescrLayout <= 0 || Py_TYPE(arr) != NpArrayType)
        return -1;
    const char *raw = (const char *)NP_FIELDS(arr)->descr;
    return DescrLayout == 2 ? *(const Py_ssize_t *)(raw + DESCR_ELSIZE_2) : *(const int *)(raw + DESCR_ELSIZE_1);
}

/* NumPy's ``may_share_memory(a, b)`` (its bounds check: max_work 0) for two exact NumPy arrays
 * read through their fields; -2 where the fields' layout is not known, -1 on an error. */
static int
np_may_share(PyObject *a, PyObject *b)
{
    PyObject *arrs[2] = {a, b};
    char *lo[2], *hi[2];
    for (int k = 0; k < 2; k++) {
        Py_ssize_t size = np_itemsize(arrs[k]);
        if (size < 0)
            return -2;
        NpFields *f = NP_FIELDS(arrs[k]);
        Py_ssize_t low = 0, up = 0;
        int empty = 0;
        for (int i = 0; i < f->nd; i++) {
            if (f->dimensions[i] == 0) {
                empty = 1;
                break;
            }
            Py_ssize_t off = f->strides[i] * (f->dimensions[i] - 1);
            if (off > 0)
                up += off;
            else
                low += off;
        }
        /* (NumPy's ``offset_bounds_from_strides``: an empty array is the empty range at its data) */
        lo[k] = f->data + (empty ? 0 : low);
        hi[k] = f->data + (empty ? 0 : up + size);
    }
    return !(lo[0] >= hi[1] || lo[1] >= hi[0]);
}

static PyObject *
init(PyObject *self, PyObject *args)
{
    PyObject *storage, *nparray, *kinds, *config, *pywrap, *scalars, *slow, *readers, *numbers, *mayshare, *perm,
        *square, *reciprocal, *sqrt, *npints;
    if (!PyArg_ParseTuple(args, "O!O!O!OOO!OO!O!OO!OOOO!", &PyType_Type, &storage, &PyType_Type, &nparray,
                          &PyDict_Type, &kinds, &config, &pywrap, &PyFrozenSet_Type, &scalars, &slow, &PyDict_Type,
                          &readers, &PyFrozenSet_Type, &numbers, &mayshare, &PyType_Type, &perm, &square, &reciprocal,
                          &sqrt, &PyFrozenSet_Type, &npints))
        return NULL;
    if (slot_offset(storage, "ctx", &s_ctx) || slot_offset(storage, "be", &s_be) ||
        slot_offset(storage, "layout", &s_layout) || slot_offset(storage, "dtype", &s_dtype) ||
        slot_offset(storage, "alloc", &s_alloc) || slot_offset(storage, "origin", &s_origin) ||
        slot_offset(storage, "ghost", &s_ghost) || slot_offset(storage, "version", &s_version) ||
        slot_offset(storage, "halo_valid", &s_halo_valid) || slot_offset(storage, "_views", &s_views) ||
        slot_offset(storage, "flights", &s_flights) || slot_offset(storage, "exposed", &s_exposed) ||
        slot_offset(storage, "copies", &s_copies))
        return NULL;
    PyObject *ctype = (PyObject *)Py_TYPE(config);
    if (slot_offset(ctype, "whole_lane", &c_whole_lane) || slot_offset(ctype, "replicate_below", &c_replicate_below) ||
        slot_offset(ctype, "fuse_replicated_min", &c_fuse_replicated_min) || slot_offset(ctype, "fuse", &c_fuse) ||
        slot_offset(ctype, "fuse_min_size", &c_fuse_min_size))
        return NULL;
    Py_XSETREF(StorageType, (PyTypeObject *)Py_NewRef(storage));
    Py_XSETREF(NpArrayType, (PyTypeObject *)Py_NewRef(nparray));
    Py_XSETREF(Kinds, Py_NewRef(kinds));
    Py_XSETREF(Config, Py_NewRef(config));
    Py_XSETREF(PyWrap, Py_NewRef(pywrap));
    Py_XSETREF(NumpyScalars, Py_NewRef(scalars));
    Py_XSETREF(Slow, Py_NewRef(slow));
    Py_XSETREF(Readers, Py_NewRef(readers));
    Py_XSETREF(Numbers, Py_NewRef(numbers));
    Py_XSETREF(MayShare, Py_NewRef(mayshare));
    Py_XSETREF(PermType, Py_NewRef(perm));
    Py_XSETREF(Square, Py_NewRef(square));
    Py_XSETREF(Reciprocal, Py_NewRef(reciprocal));
    Py_XSETREF(Sqrt, Py_NewRef(sqrt));
    Py_XSETREF(NpInts, Py_NewRef(npints));
    for (int i = 0; i < MAX_PERMS; i++)
        Py_CLEAR(Perms[i]);
    forget_kinds();
    NpLayoutOk = np_layout_ok();
    if (NpLayoutOk < 0)
        return NULL;
    DescrLayout = descr_layout();
    if (DescrLayout < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
register_array(PyObject *self, PyObject *args)
{
    PyObject *array;
    Py_ssize_t min_elide;
    if (!PyArg_ParseTuple(args, "O!n", &PyType_Type, &array, &min_elide))
        return NULL;
    if (slot_offset(array, "_s", &a_s) || slot_offset(array, "_map", &a_map) || slot_offset(array, "_lay", &a_lay) ||
        slot_offset(array, "_loc", &a_loc) || slot_offset(array, "_pend", &a_pend))
        return NULL;
    Py_XSETREF(ArrayType, (PyTypeObject *)Py_NewRef(array));
    MinElide = min_elide;
    Py_RETURN_NONE;
}

/* Whether a and b are equal: identical, or == (an error counts as not equal). */
static int
same(PyObject *a, PyObject *b)
{
    if (a == b)
        return 1;
    int r = PyObject_RichCompareBool(a, b, Py_EQ);
    if (r < 0) {
        PyErr_Clear();
        return 0;
    }
    return r;
}

static int
true_attr(PyObject *o, PyObject *name)
{
    PyObject *v = PyObject_GetAttr(o, name);
    if (v == NULL) {
        PyErr_Clear();
        return 0;
    }
    int r = v == Py_True;
    Py_DECREF(v);
    return r;
}

static PyObject *
fallback(PyObject *ctx, PyObject *be, PyObject *res)
{
    PyObject *a[3] = {ctx, be, res};
    return PyObject_Vectorcall(PyWrap, a, 3, NULL);
}

/* The kinds (whole._KINDS entries) of the last result shapes wrap adopted, by the result's
 * dimensions read from NumPy's array fields: no shape tuple made and hashed for a shape seen
 * lately.  A kind is taken from here only for the same context and the same dtype object, and
 * passes every check of the dictionary's kinds after; a kind is a function of the shape, dtype,
 * context and settings, which those checks compare, so an entry never goes stale. */
#define KIND_SLOTS 8
#define KIND_MAXDIM 6
typedef struct {
    int nd;
    Py_ssize_t dims[KIND_MAXDIM];
    PyObject *kind;
} KindSlot;
static KindSlot KindCache[KIND_SLOTS];
static int KindNext;

static PyObject *
cached_kind(PyObject *res, PyObject *ctx, PyObject *dtype)
{
    NpFields *f = NP_FIELDS(res);
    if (NpLayoutOk <= 0 || f->nd < 1 || f->nd > KIND_MAXDIM)
        return NULL;
    for (int i = 0; i < KIND_SLOTS; i++) {
        KindSlot *k = &KindCache[i];
        if (k->kind != NULL && k->nd == f->nd && PyTuple_GET_ITEM(k->kind, 0) == ctx &&
            PyTuple_GET_ITEM(k->kind, 1) == dtype && memcmp(k->dims, f->dimensions, f->nd * sizeof(Py_ssize_t)) == 0)
            return k->kind;
    }
    return NULL;
}

static void
remember_kind(PyObject *res, PyObject *kind)
{
    NpFields *f = NP_FIELDS(res);
    if (NpLayoutOk <= 0 || f->nd < 1 || f->nd > KIND_MAXDIM || PyTuple_GET_ITEM(kind, 1) != f->descr)
        return;
    KindSlot *k = &KindCache[KindNext];
    KindNext = (KindNext + 1) % KIND_SLOTS;
    Py_XSETREF(k->kind, Py_NewRef(kind));
    k->nd = f->nd;
    memcpy(k->dims, f->dimensions, (size_t)f->nd * sizeof(Py_ssize_t));
}

static void
forget_kinds(void)
{
    for (int i = 0; i < KIND_SLOTS; i++)
        Py_CLEAR(KindCache[i].kind);
}

/* whole.wrap(ctx, be, res): its usual case here, every other in Python. */
static PyObject *
wrap_impl(PyObject *ctx, PyObject *be, PyObject *res)
{
    if (PyWrap == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "spmdarray.core._lane.wrap called before init()");
        return NULL;
    }
    if (Py_TYPE(res) != NpArrayType || ArrayType == NULL) {
        if (!PyTuple_Check(res) && !PyObject_TypeCheck(res, NpArrayType))
            return Py_NewRef(res); /* a scalar (NumPy's result of a 0-d operation) as it is */
        return fallback(ctx, be, res);
    }
    PyObject *dtype = NpLayoutOk > 0 ? Py_NewRef(NP_FIELDS(res)->descr) : PyObject_GetAttr(res, str_dtype);
    if (dtype == NULL)
        return NULL;
    PyObject *kind = cached_kind(res, ctx, dtype); /* borrowed */
    int hit = kind != NULL;
    if (!hit) {
        PyObject *shape = PyObject_GetAttr(res, str_shape);
        kind = shape ? PyDict_GetItemWithError(Kinds, shape) : NULL;
        if (kind != NULL)
            Py_INCREF(kind);
        else if (shape != NULL && !PyErr_Occurred())
            kind = small_kind(ctx, dtype, res, shape); /* (a shape not seen yet: ``whole._kind``) */
        Py_XDECREF(shape);
        if (kind == NULL || !PyTuple_CheckExact(kind) || PyTuple_GET_SIZE(kind) != 11 ||
            PyTuple_GET_ITEM(kind, 0) != ctx) {
            Py_XDECREF(kind);
            Py_DECREF(dtype);
            return PyErr_Occurred() ? NULL : fallback(ctx, be, res);
        }
    }
    else
        Py_INCREF(kind); /* (the dict may change in the comparisons below) */
    PyObject *out = NULL;
    PyObject *geometry = PyTuple_GET_ITEM(kind, 6);
    PyObject *rep = PyTuple_GET_ITEM(kind, 8);
    PyObject *size = PyTuple_GET_ITEM(kind, 10);
    PyObject *m = SLOT(Config, c_fuse_replicated_min);
    PyObject *rb = SLOT(Config, c_replicate_below);
    int ok = same(PyTuple_GET_ITEM(kind, 1), dtype) && rb != NULL && same(PyTuple_GET_ITEM(kind, 9), rb) &&
             PyTuple_CheckExact(geometry) && PyTuple_GET_SIZE(geometry) == 4 && PyLong_CheckExact(size);
    PyObject *holds = ok ? PyTuple_GET_ITEM(geometry, 3) : NULL;
    if (ok && rep == Py_True) {
        /* On the lane: ``rep and (not m or size < m)`` (the other cases ask ``fuses``). */
        ok = holds == Py_None && m != NULL && PyLong_CheckExact(m);
        long mv = ok ? PyLong_AsLong(m) : 0;
        ok = ok && (mv == 0 || (mv > 0 && PyLong_AsLong(size) < mv));
        if (PyErr_Occurred()) {
            PyErr_Clear();
            ok = 0;
        }
    }
    else if (ok && rep == Py_False) {
        /* A split result on one rank (as large as replicate_below): its block held whole, no
         * ghost frame (``holds`` is (None, key of the block's view)); on the lane below the
         * fuser's size (``not fuses(size, False)``). */
        ok = PyTuple_CheckExact(holds) && PyTuple_GET_SIZE(holds) == 2 && PyTuple_GET_ITEM(holds, 0) == Py_None;
        int f = ok ? split_fuses(res) : 1;
        if (f < 0)
            PyErr_Clear();
        ok = ok && f == 0;
    }
    else
        ok = 0;
    if (ok && !hit)
        remember_kind(res, kind);
    if (ok && NpLayoutOk > 0) {
        int want = NP_C_CONTIGUOUS | NP_OWNDATA | NP_WRITEABLE;
        ok = (NP_FIELDS(res)->flags & want) == want;
    }
    else if (ok) {
        PyObject *flags = PyObject_GetAttr(res, str_flags);
        if (flags == NULL)
            goto done;
        ok = true_attr(flags, str_c_contiguous) && true_attr(flags, str_owndata) && true_attr(flags, str_writeable);
        Py_DECREF(flags);
    }
    if (!ok) {
        out = fallback(ctx, be, res);
        goto done;
    }
    PyObject *views = PyDict_New(), *halo = PyDict_New(), *flights = PyList_New(0);
    PyObject *copies = PyObject_IsTrue(PyTuple_GET_ITEM(kind, 7)) ? Py_NewRef(Py_None) : PyDict_New();
    PyObject *st = StorageType->tp_alloc(StorageType, 0);
    PyObject *o = ArrayType->tp_alloc(ArrayType, 0);
    PyObject *id = st ? PyLong_FromVoidPtr(st) : NULL;
    PyObject *loc = id ? PyTuple_Pack(4, id, res, rep, res) : NULL;
    Py_XDECREF(id);
    if (!views || !halo || !flights || !copies || !st || !o || !loc) {
        Py_XDECREF(views);
        Py_XDECREF(halo);
        Py_XDECREF(flights);
        Py_XDECREF(copies);
        Py_XDECREF(st);
        Py_XDECREF(o);
        Py_XDECREF(loc);
        goto done;
    }
    if (rep == Py_False && PyDict_SetItem(views, PyTuple_GET_ITEM(holds, 1), res) < 0) {
        /* (``adopt``: the block's view, the allocation itself, cached as Storage() caches it) */
        Py_DECREF(views);
        Py_DECREF(halo);
        Py_DECREF(flights);
        Py_DECREF(copies);
        Py_DECREF(st);
        Py_DECREF(o);
        Py_DECREF(loc);
        goto done;
    }
    /* storage.adopt */
    put(st, s_ctx, ctx);
    put(st, s_be, be);
    put(st, s_layout, PyTuple_GET_ITEM(kind, 3));
    put(st, s_dtype, dtype);
    put(st, s_version, zero);
    SLOT(st, s_halo_valid) = halo;
    SLOT(st, s_views) = views;
    SLOT(st, s_flights) = flights;
    put(st, s_exposed, Py_False);
    put(st, s_ghost, PyTuple_GET_ITEM(geometry, 0));
    put(st, s_origin, PyTuple_GET_ITEM(geometry, 2));
    put(st, s_alloc, res);
    SLOT(st, s_copies) = copies;
    /* the array */
    SLOT(o, a_s) = st;
    put(o, a_map, PyTuple_GET_ITEM(kind, 4));
    put(o, a_lay, PyTuple_GET_ITEM(kind, 5));
    put(o, a_pend, Py_None);
    SLOT(o, a_loc) = loc;
    out = o;
done:
    Py_XDECREF(dtype);
    Py_DECREF(kind);
    return out;
}

static PyObject *
wrap(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    EXPECT_ARGS(3, "wrap(ctx, be, res)")
    return wrap_impl(args[0], args[1], args[2]);
}

/* Whether the fuser defers elementwise operations on a split array of the size of the NumPy
 * array v (``whole.fuses`` for a split array: ``config.fuse`` and at least ``fuse_min_size``
 * elements); -1 on an error. */
static int
split_fuses(PyObject *v)
{
    PyObject *f = SLOT(Config, c_fuse), *m = SLOT(Config, c_fuse_min_size);
    if (f == NULL || m == NULL)
        return -1;
    if (f != Py_True)
        return f == Py_False ? 0 : PyObject_IsTrue(f);
    PyObject *size = PyObject_GetAttr(v, str_size);
    if (size == NULL)
        return -1;
    int r = PyObject_RichCompareBool(size, m, Py_GE);
    Py_DECREF(size);
    return r;
}

/* Entry k of x._loc (borrowed): its copy on the lane (k = 1, as ``whole.local`` gives it) or its
 * copy for indexing and assignment (k = 3, as ``whole.whole_copy``), where x._loc is (id of x._s,
 * copy, True, copy) with x._s a Storage (not a deferred value) and that entry a NumPy array, or
 * where ``split`` also (id of x._s, copy or None, False, copy): a split array this rank holds
 * whole (one rank), whose copy on the lane is refused where the fuser takes arrays that large;
 * else NULL (no error). */
static PyObject *
lane_entry(PyObject *x, Py_ssize_t k, int split)
{
    PyObject *c = SLOT(x, a_loc);
    PyObject *s = SLOT(x, a_s);
    if (c == NULL || s == NULL || !PyTuple_CheckExact(c) || PyTuple_GET_SIZE(c) != 4 || Py_TYPE(s) != StorageType)
        return NULL;
    PyObject *id = PyTuple_GET_ITEM(c, 0);
    if (!PyLong_CheckExact(id) || PyLong_AsVoidPtr(id) != (void *)s) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *v = PyTuple_GET_ITEM(c, k), *rep = PyTuple_GET_ITEM(c, 2);
    if (Py_TYPE(v) != NpArrayType || (rep != Py_True && !(split && rep == Py_False)))
        return NULL;
    if (rep == Py_False && k == 1) {
        int f = split_fuses(v);
        if (f != 0) {
            PyErr_Clear();
            return NULL;
        }
    }
    return v;
}

/* x's copy on the lane (``whole.local``), x's copy for indexing and assignment
 * (``whole.whole_copy``), and the copy of a replicated array alone (``index_by``'s key). */
#define lane_copy(x) lane_entry((x), 1, 1)
#define whole_view(x) lane_entry((x), 3, 1)
#define replicated_copy(x) lane_entry((x), 1, 0)

/* Whether x is a spmdarray array and the lane is on (the extension initialised). */
static inline int
lane_ready(PyObject *x)
{
    return ArrayType != NULL && Config != NULL && Py_TYPE(x) == ArrayType && SLOT(Config, c_whole_lane) == Py_True;
}

/* The lane's form of operand ``other`` (borrowed) for an operation on context ctx: a Python
 * float or int, a NumPy scalar, or (``arrays``) the copy of an array on the lane; NULL with
 * no error where the Python lane decides, NULL with an error set on a failure. */
static PyObject *
lane_operand(PyObject *other, PyObject *ctx, int arrays)
{
    PyTypeObject *t = Py_TYPE(other);
    if (t == &PyFloat_Type || t == &PyLong_Type)
        return other;
    if (t == ArrayType) {
        PyObject *o = arrays ? lane_copy(other) : NULL;
        return o != NULL && SLOT(SLOT(other, a_s), s_ctx) == ctx ? o : NULL;
    }
    int r = PySet_Contains(NumpyScalars, (PyObject *)t);
    return r > 0 ? other : NULL;
}

/* NumPy's result res (a new reference, released; NULL: its error) wrapped on the context and
 * backend of storage s. */
static PyObject *
wrap_new(PyObject *s, PyObject *res)
{
    if (res == NULL)
        return NULL;
    PyObject *out = wrap_impl(SLOT(s, s_ctx), SLOT(s, s_be), res);
    Py_DECREF(res);
    return out;
}

/* NumPy's ufunc(a, b), wrapped on the context and backend of storage s (self held meanwhile). */
static PyObject *
call_wrapped(PyObject *ufunc, PyObject *a, PyObject *b, PyObject *self, PyObject *s)
{
    Py_INCREF(self);
    PyObject *call[2] = {a, b};
    PyObject *out = wrap_new(s, PyObject_Vectorcall(ufunc, call, 2, NULL));
    Py_DECREF(self);
    return out;
}

#include "_lane_rows.h"

/* binary(ufunc, self, other, reflected): NumPy's ufunc on the copies of an array on the
 * lane (or of a split row part a current copy holds, ``held_row``) and a scalar or another
 * array on the lane, wrapped; SLOW for every other case. */
static PyObject *
binary(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    EXPECT_ARGS(4, "binary(ufunc, self, other, reflected)")
    PyObject *ufunc = args[0], *self = args[1], *other = args[2];
    int reflected = PyObject_IsTrue(args[3]);
    if (!lane_ready(self))
        return Py_NewRef(Slow);
    PyObject *held = NULL, *v = lane_copy(self);
    if (v == NULL) {
        /* (the Python operators' ``reread``: a split view this rank does not hold whole) */
        if ((held = held_row(self)) == NULL)
            return PyErr_Occurred() ? NULL : Py_NewRef(Slow);
        v = held;
    }
    PyObject *s = SLOT(self, a_s);
    PyObject *ctx = SLOT(s, s_ctx);
    PyObject *out = NULL;
    PyObject *o = lane_operand(other, ctx, !reflected);
    if (o == NULL) {
        out = PyErr_Occurred() ? NULL : Py_NewRef(Slow);
        goto done;
    }
    /* A large copy may be a temporary whose allocation NumPy's elision would reuse: Python decides. */
    Py_ssize_t n = np_itemsize(v);
    if (n >= 0) {
        for (int i = 0; i < NP_FIELDS(v)->nd; i++)
            n *= NP_FIELDS(v)->dimensions[i];
    }
    else {
        PyObject *nb = PyObject_GetAttr(v, str_nbytes);
        if (nb == NULL)
            goto done;
        n = PyLong_AsSsize_t(nb);
        Py_DECREF(nb);
        if (n == -1 && PyErr_Occurred())
            goto done;
    }
    if (n >= MinElide)
        out = Py_NewRef(Slow);
    else
        out = reflected ? call_wrapped(ufunc, o, v, self, s) : call_wrapped(ufunc, v, o, self, s);
done:
    Py_XDECREF(held);
    return out;
}

/* Whether key is a Python int or slice, or a tuple of them (``A[i, :k]``), with None
 * (``np.newaxis``) and NumPy's integers (``G[k, E - w, neigh_idx[a, b]]``) among them for
 * ``x[key]`` (``getter``, as ``whole.getitem`` takes them). */
static int
plain_key(PyObject *key, int getter)
{
    PyTypeObject *t = Py_TYPE(key);
    if (t == &PyLong_Type || t == &PySlice_Type)
        return 1;
    if (t != &PyTuple_Type)
        return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(key); i++) {
        PyObject *k = PyTuple_GET_ITEM(key, i);
        PyTypeObject *u = Py_TYPE(k);
        if (u != &PyLong_Type && u != &PySlice_Type &&
            !(getter && (k == Py_None || (NpInts != NULL && PySet_Contains(NpInts, (PyObject *)u) > 0))))
            return 0;
    }
    return 1;
}

/* Where the view of x that the lane makes takes its map from: 1 x's map (made now where unmade:
 * at most one unmade view lies between a view and a made map), 0 x itself (its own parent's map
 * is made), -2 for an x whose ``_pend`` is not the lane's (SLOW), -1 on an error. */
static int
parent_rule(PyObject *x)
{
    PyObject *p = SLOT(x, a_pend);
    if (p == NULL || (p != Py_None && !(PyTuple_CheckExact(p) && PyTuple_GET_SIZE(p) == 4)))
        return -2;
    if (p == Py_None || Py_TYPE(PyTuple_GET_ITEM(p, 0)) == ArrayType)
        return 1;
    return PyObject_IsTrue(PyTuple_GET_ITEM(p, 3));
}

/* The view of x whose copy is r (NumPy's view of x's copy) and whose map is composed from
 * ``key`` when first read, as whole.lazy_view and whole.transposed make it: ``_loc`` (the id
 * of the storage, r on the lane or None, rep (x's: True replicated, False split), r),
 * ``_pend`` (the parent by parent_rule's answer own_map, key, r's shape, False). */
static PyObject *
lane_view(PyObject *x, int own_map, int on_lane, PyObject *r, PyObject *key, PyObject *shape, PyObject *rep)
{
    PyObject *parent;
    if (!own_map)
        parent = Py_NewRef(x);
    else if (SLOT(x, a_map) != NULL)
        parent = Py_NewRef(SLOT(x, a_map));
    else if ((parent = PyObject_GetAttr(x, str_map)) == NULL)
        return NULL;
    PyObject *out = NULL;
    PyObject *loc = PyTuple_Pack(4, PyTuple_GET_ITEM(SLOT(x, a_loc), 0), on_lane ? r : Py_None, rep, r);
    PyObject *pend = loc ? PyTuple_Pack(4, parent, key, shape, Py_False) : NULL;
    PyObject *o = pend ? ArrayType->tp_alloc(ArrayType, 0) : NULL;
    if (o != NULL) {
        put(o, a_s, SLOT(x, a_s));
        SLOT(o, a_loc) = loc;
        SLOT(o, a_pend) = pend;
        loc = pend = NULL;
        out = o;
    }
    Py_XDECREF(loc);
    Py_XDECREF(pend);
    Py_DECREF(parent);
    return out;
}

/* The kind character of a NumPy array's dtype ('f', 'i' ...), '?' for a kind that is not one
 * character, or 0 with an error set. */
static int
dtype_kind(PyObject *arr)
{
    if (np_itemsize(arr) >= 0)
        return (unsigned char)((const char *)NP_FIELDS(arr)->descr)[DESCR_KIND];
    PyObject *dt = PyObject_GetAttr(arr, str_dtype);
    if (dt == NULL)
        return 0;
    PyObject *kind = PyObject_GetAttr(dt, str_kind);
    Py_DECREF(dt);
    if (kind == NULL)
        return 0;
    int k = PyUnicode_CheckExact(kind) && PyUnicode_GET_LENGTH(kind) == 1 ? (int)PyUnicode_READ_CHAR(kind, 0) : '?';
    Py_DECREF(kind);
    return k;
}

/* ``self[key]`` for a spmdarray integer or boolean array ``key`` on the lane, as
 * ``whole.index_by`` computes it: NumPy's advanced indexing of the replicated array's copy (a
 * new array, wrapped), its IndexError as it is; SLOW for every other case. */
static PyObject *
index_by(PyObject *self, PyObject *key)
{
    PyObject *v = whole_view(self), *k = replicated_copy(key);
    if (v == NULL || k == NULL || SLOT(SLOT(key, a_s), s_ctx) != SLOT(SLOT(self, a_s), s_ctx))
        return Py_NewRef(Slow);
    int kind = dtype_kind(k);
    if (kind == 0)
        return NULL;
    if (kind != 'i' && kind != 'u' && kind != 'b')
        return Py_NewRef(Slow);
    Py_INCREF(self);
    Py_INCREF(key);
    PyObject *out = wrap_new(SLOT(self, a_s), PyObject_GetItem(v, k));
    Py_DECREF(key);
    Py_DECREF(self);
    return out;
}

/* transpose(self): ``self.T`` of a replicated array on the lane, as ``whole.transposed`` makes
 * it for the reversed axes: NumPy's transpose of the copy, the view map composed when first
 * read (``_pend`` holds the parent's map, or the parent, and the axes as a ``_Perm``); SLOW for
 * every other case. */
static PyObject *
transpose(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    EXPECT_ARGS(1, "transpose(self)")
    PyObject *self = args[0];
    if (!lane_ready(self) || PermType == NULL)
        return Py_NewRef(Slow);
    PyObject *v = whole_view(self);
    int own_map = v == NULL ? -2 : parent_rule(self);
    if (own_map < 0)
        return own_map == -1 ? NULL : Py_NewRef(Slow);
    int on_lane = PyTuple_GET_ITEM(SLOT(self, a_loc), 1) != Py_None;
    Py_INCREF(self);
    Py_INCREF(v);
    PyObject *out = NULL, *shape = NULL;
    PyObject *r = PyObject_GetAttr(v, str_T);
    if (r == NULL)
        goto done;
    if (Py_TYPE(r) != NpArrayType) {
        out = Py_NewRef(Slow);
        goto done;
    }
    PyObject *nd = PyObject_GetAttr(r, str_ndim);
    if (nd == NULL)
        goto done;
    long ndim = PyLong_AsLong(nd);
    Py_DECREF(nd);
    if (ndim < 0 || ndim >= MAX_PERMS) {
        if (PyErr_Occurred())
            goto done;
        out = Py_NewRef(Slow);
        goto done;
    }
    if (Perms[ndim] == NULL) {
        PyObject *axes = PyTuple_New(ndim);
        for (long i = 0; axes != NULL && i < ndim; i++) {
            PyObject *a = PyLong_FromLong(ndim - 1 - i);
            if (a == NULL)
                Py_CLEAR(axes);
            else
                PyTuple_SET_ITEM(axes, i, a);
        }
        Perms[ndim] = axes ? PyObject_CallOneArg(PermType, axes) : NULL;
        Py_XDECREF(axes);
        if (Perms[ndim] == NULL)
            goto done;
    }
    shape = PyObject_GetAttr(r, str_shape);
    if (shape != NULL)
        out = lane_view(self, own_map, on_lane, r, Perms[ndim], shape, PyTuple_GET_ITEM(SLOT(self, a_loc), 2));
done:
    Py_XDECREF(shape);
    Py_XDECREF(r);
    Py_DECREF(v);
    Py_DECREF(self);
    return out;
}

/* x._loc[3] (borrowed), the whole copy ``ndarray.shape`` reads, where x._loc is current for
 * x._s; NULL (no error) otherwise. */
static PyObject *
held_copy(PyObject *x)
{
    PyObject *c = SLOT(x, a_loc);
    PyObject *s = SLOT(x, a_s);
    if (c == NULL || s == NULL || !PyTuple_CheckExact(c) || PyTuple_GET_SIZE(c) != 4)
        return NULL;
    PyObject *id = PyTuple_GET_ITEM(c, 0), *v = PyTuple_GET_ITEM(c, 3);
    if (Py_TYPE(v) != NpArrayType || !PyLong_CheckExact(id) || PyLong_AsVoidPtr(id) != (void *)s) {
        PyErr_Clear();
        return NULL;
    }
    return v;
}

/* The getters of ``shape``, ``ndim`` and ``size``: the attribute of the whole copy where the
 * array holds one (as ``ndarray.shape`` reads it: a view the lane made need not make its map);
 * SLOW for every other case.  ``dtype``: its Storage's (a deferred value's in Python). */
static PyObject *
copy_attribute(PyObject *const *args, Py_ssize_t nargs, PyObject *name)
{
    PyObject *v = nargs == 1 ? held_copy(args[0]) : NULL;
    return v == NULL ? Py_NewRef(Slow) : PyObject_GetAttr(v, name);
}

static PyObject *
get_shape(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    return copy_attribute(args, nargs, str_shape);
}

static PyObject *
get_ndim(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    return copy_attribute(args, nargs, str_ndim);
}

static PyObject *
get_size(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    return copy_attribute(args, nargs, str_size);
}

static PyObject *
get_dtype(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *s = nargs == 1 ? SLOT(args[0], a_s) : NULL;
    if (s == NULL || Py_TYPE(s) != StorageType || SLOT(s, s_dtype) == NULL)
        return Py_NewRef(Slow);
    return Py_NewRef(SLOT(s, s_dtype));
}

/* ``self ** e`` for NumPy's own exponents (``operators._scalar_power``): ``square`` for a Python
 * int 2 and every dtype but object, ``reciprocal`` for -1 and ``sqrt`` for a Python float 0.5
 * on inexact dtypes, on the copy of an array on the lane, wrapped; SLOW for every other case
 * (``power`` then, in Python, or an array off the lane). */
static PyObject *
special_pow(PyObject *self, PyObject *e)
{
    PyObject *v = lane_copy(self);
    if (v == NULL || Square == NULL)
        return Py_NewRef(Slow);
    int kind = dtype_kind(v);
    if (kind == 0)
        return NULL;
    int inexact = kind == 'f' || kind == 'c';
    PyObject *u = NULL;
    if (PyLong_CheckExact(e)) {
        int overflow;
        long val = PyLong_AsLongAndOverflow(e, &overflow);
        if (!overflow && val == 2 && kind != 'O')
            u = Square;
        else if (!overflow && val == -1 && inexact)
            u = Reciprocal;
    }
    else if (PyFloat_CheckExact(e) && PyFloat_AS_DOUBLE(e) == 0.5 && inexact)
        u = Sqrt;
    if (u == NULL)
        return Py_NewRef(Slow);
    Py_INCREF(self);
    PyObject *out = wrap_new(SLOT(self, a_s), PyObject_CallOneArg(u, v));
    Py_DECREF(self);
    return out;
}

/* getitem(self, key): ``ndarray.__getitem__`` of a replicated array with a key of Python
 * integers, slices and None: NumPy's scalar, or a view whose map is made when first read
 * (``whole.lazy_view``); SLOW for every other case. */
static PyObject *
getitem(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    EXPECT_ARGS(2, "getitem(self, key)")
    PyObject *self = args[0], *key = args[1];
    if (lane_ready(self) && Py_TYPE(key) == ArrayType)
        return index_by(self, key);
    if (!lane_ready(self) || !plain_key(key, 1))
        return Py_NewRef(Slow);
    PyObject *v = whole_view(self);
    if (v == NULL)
        return split_getitem(self, key); /* (a split array this rank does not hold whole) */
    PyObject *m = SLOT(Config, c_fuse_replicated_min);
    PyObject *rep = PyTuple_GET_ITEM(SLOT(self, a_loc), 2);
    /* (a replicated view: fuse_replicated_min 0 keeps every one on the lane, else ``fuses``
     * decides, in Python; a split one's is on the lane below the fuser's size) */
    if (rep == Py_True && (m == NULL || !PyLong_CheckExact(m) || PyObject_Not(m) != 1))
        return Py_NewRef(Slow);
    int own_map = parent_rule(self);
    if (own_map < 0)
        return own_map == -1 ? NULL : Py_NewRef(Slow);
    Py_INCREF(self);
    Py_INCREF(v);
    PyObject *out = NULL, *shape = NULL;
    PyObject *r = PyObject_GetItem(v, key);
    if (r == NULL || Py_TYPE(r) != NpArrayType) {
        out = r; /* NumPy's scalar, or its IndexError */
        goto done;
    }
    shape = PyObject_GetAttr(r, str_shape);
    if (shape == NULL)
        goto done;
    if (!PyTuple_CheckExact(shape) || PyTuple_GET_SIZE(shape) == 0) {
        out = Py_NewRef(Slow); /* (a 0-d result: ``whole.lazy_view``'s other branch) */
        goto done;
    }
    int on_lane = rep == Py_True ? 1 : !split_fuses(r);
    if (PyErr_Occurred())
        goto done;
    out = lane_view(self, own_map, on_lane, r, key, shape, rep);
done:
    Py_XDECREF(shape);
    if (out != r)
        Py_XDECREF(r);
    Py_DECREF(v);
    Py_DECREF(self);
    return out;
}

/* inplace(ufunc, self, other): ``self op= other`` for an array on the lane (no deferred
 * value reads its storage, no message is in flight into it) and a scalar or another array
 * on the lane: NumPy's ufunc into the copy, the storage's version bumped; self returned,
 * or SLOW for every other case. */
static PyObject *
inplace(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    EXPECT_ARGS(3, "inplace(ufunc, self, other)")
    PyObject *ufunc = args[0], *self = args[1], *other = args[2];
    if (!lane_ready(self))
        return Py_NewRef(Slow);
    PyObject *v = lane_copy(self);
    if (v == NULL)
        return Py_NewRef(Slow);
    PyObject *s = SLOT(self, a_s);
    int q = quiet_storage(self, s);
    if (q <= 0)
        return q < 0 ? NULL : Py_NewRef(Slow);
    PyObject *o = lane_operand(other, SLOT(s, s_ctx), 1);
    if (o == NULL)
        return PyErr_Occurred() ? NULL : Py_NewRef(Slow);
    Py_INCREF(self);
    Py_INCREF(s);
    Py_INCREF(v);
    Py_INCREF(o);
    PyObject *out = NULL;
    PyObject *call[3] = {v, o, v};
    PyObject *res = PyObject_Vectorcall(ufunc, call, 3, NULL);
    if (res != NULL) {
        Py_DECREF(res);
        if (bump(s) == 0)
            out = Py_NewRef(self);
    }
    Py_DECREF(o);
    Py_DECREF(v);
    Py_DECREF(s);
    Py_DECREF(self);
    return out;
}

/* array_ufunc(self, ufunc, method, *inputs): ``ndarray.__array_ufunc__`` (as a LaneMethod: NumPy
 * calls it with the keywords apart, and any keyword goes to Python) for a call whose inputs
 * are arrays on the lane and numbers (``np.sqrt(a)``, ``alpha * A[:i, k]``: NumPy's scalar
 * operators call the ufunc), as ``whole.ufunc_call`` computes it: NumPy's call on the
 * copies, wrapped; SLOW for every other case. */
static PyObject *
array_ufunc(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 4 || nargs > 6)
        return Py_NewRef(Slow);
    PyObject *self = args[0], *ufunc = args[1], *method = args[2];
    if (!lane_ready(self) || !PyUnicode_CheckExact(method) ||
        PyUnicode_CompareWithASCIIString(method, "__call__") != 0)
        return Py_NewRef(Slow);
    PyObject *s = SLOT(self, a_s);
    if (s == NULL || Py_TYPE(s) != StorageType)
        return Py_NewRef(Slow);
    PyObject *ctx = SLOT(s, s_ctx);
    Py_ssize_t n = nargs - 3;
    PyObject *call[3];
    for (Py_ssize_t i = 0; i < n; i++) {
        call[i] = lane_operand(args[3 + i], ctx, 1);
        if (call[i] == NULL)
            return PyErr_Occurred() ? NULL : Py_NewRef(Slow);
    }
    Py_INCREF(self); /* (the operands, and so their copies, are the caller's while NumPy runs) */
    PyObject *res = PyObject_Vectorcall(ufunc, call, n, NULL);
    PyObject *out = NULL;
    if (res != NULL) {
        out = wrap_impl(ctx, SLOT(s, s_be), res);
        Py_DECREF(res);
    }
    Py_DECREF(self);
    return out;
}

/* Whether x's storage may be written straight away: no deferred value reads it, no message
 * is in flight into it (``whole.writable``'s test); -1 on an error. */
static int
quiet_storage(PyObject *x, PyObject *s)
{
    PyObject *fl = SLOT(s, s_flights);
    if (fl == NULL || !PyList_CheckExact(fl) || PyList_GET_SIZE(fl) != 0)
        return 0;
    if (PyDict_GET_SIZE(Readers)) {
        int r = PyDict_Contains(Readers, PyTuple_GET_ITEM(SLOT(x, a_loc), 0));
        return r < 0 ? -1 : !r;
    }
    return 1;
}

static int
bump(PyObject *s)
{
    PyObject *ver = SLOT(s, s_version);
    PyObject *nv = ver ? PyNumber_Add(ver, one) : NULL;
    if (nv == NULL) {
        if (ver == NULL)
            PyErr_SetString(PyExc_AttributeError, "version");
        return -1;
    }
    SLOT(s, s_version) = nv;
    Py_DECREF(ver);
    return 0;
}

/* ``self[key] = value`` for a key of Python integers and slices and a spmdarray array on the
 * lane, into a replicated array's copy, as ``whole.setitem`` assigns it: NumPy's assignment of
 * the value's copy (copied first where the two may share memory), the version bumped; True,
 * or SLOW for every other case (a deferred value, a string value, a storage with readers). */
static PyObject *
assign_region(PyObject *self, PyObject *key, PyObject *value)
{
    PyObject *v = whole_view(self);
    PyObject *val = whole_view(value);
    PyObject *s = SLOT(self, a_s);
    if (v == NULL || val == NULL || SLOT(SLOT(value, a_s), s_ctx) != SLOT(s, s_ctx) || MayShare == NULL)
        return Py_NewRef(Slow);
    int q = quiet_storage(self, s);
    if (q <= 0)
        return q < 0 ? NULL : Py_NewRef(Slow);
    int kind = dtype_kind(val);
    if (kind == 0)
        return NULL;
    if (kind == '?' || strchr("USV", kind) != NULL)
        return Py_NewRef(Slow); /* (strings are converted whole first, in Python; '?': an unknown kind) */
    Py_INCREF(s);
    Py_INCREF(v);
    Py_INCREF(val);
    PyObject *out = NULL;
    PyObject *call[2] = {v, val};
    int sh = np_may_share(v, val);
    PyObject *shared = sh == -2 ? PyObject_Vectorcall(MayShare, call, 2, NULL) : Py_NewRef(sh ? Py_True : Py_False);
    if (shared != NULL) {
        sh = PyObject_IsTrue(shared);
        Py_DECREF(shared);
        if (sh > 0)
            Py_SETREF(val, PyObject_CallMethodNoArgs(val, str_copy)); /* NumPy's copy loop may read what it wrote */
        if (sh >= 0 && val != NULL && PyObject_SetItem(v, key, val) == 0 && bump(s) == 0)
            out = Py_NewRef(Py_True);
    }
    Py_XDECREF(val);
    Py_DECREF(v);
    Py_DECREF(s);
    return out;
}

/* setitem(self, key, value): ``self[key] = value`` for a number (a type of whole.NUMBERS) or an
 * array on the lane and a key of Python integers and slices, into a replicated array's copy
 * (NumPy's assignment, or NumPy's error with nothing written), or the store-back of
 * ``self[key] op= y``; True, or SLOW for every other case. */
static PyObject *
setitem(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    EXPECT_ARGS(3, "setitem(self, key, value)")
    PyObject *self = args[0], *key = args[1], *value = args[2];
    if (!lane_ready(self))
        return Py_NewRef(Slow);
    if (Py_TYPE(value) == ArrayType) {
        /* ``x[key] op= y`` stores back the view ``x[key]`` it updated in place (``whole.stores_back``):
         * NumPy copies it onto itself, which changes nothing. */
        PyObject *p = SLOT(value, a_pend), *m = SLOT(self, a_map);
        if (SLOT(value, a_s) == SLOT(self, a_s) && p != NULL && PyTuple_CheckExact(p) && PyTuple_GET_SIZE(p) == 4 &&
            PyTuple_GET_ITEM(p, 1) == key && (PyTuple_GET_ITEM(p, 0) == self || (m && PyTuple_GET_ITEM(p, 0) == m)))
            return Py_NewRef(Py_True);
        return plain_key(key, 0) ? assign_region(self, key, value) : Py_NewRef(Slow);
    }
    if (!plain_key(key, 0))
        return Py_NewRef(Slow);
    int r = PySet_Contains(Numbers, (PyObject *)Py_TYPE(value));
    if (r <= 0)
        return r < 0 ? NULL : Py_NewRef(Slow);
    PyObject *c = SLOT(self, a_loc);
    PyObject *s = SLOT(self, a_s);
    if (c == NULL || s == NULL || !PyTuple_CheckExact(c) || PyTuple_GET_SIZE(c) != 4 || Py_TYPE(s) != StorageType)
        return Py_NewRef(Slow);
    PyObject *id = PyTuple_GET_ITEM(c, 0);
    PyObject *v = PyTuple_GET_ITEM(c, 3);
    if (!PyLong_CheckExact(id) || PyLong_AsVoidPtr(id) != (void *)s || Py_TYPE(v) != NpArrayType) {
        PyErr_Clear();
        return Py_NewRef(Slow);
    }
    r = quiet_storage(self, s);
    if (r <= 0)
        return r < 0 ? NULL : Py_NewRef(Slow);
    Py_INCREF(s);
    Py_INCREF(v);
    PyObject *out = NULL;
    if (PyObject_SetItem(v, key, value) == 0 && bump(s) == 0)
        out = Py_NewRef(Py_True);
    Py_DECREF(v);
    Py_DECREF(s);
    return out;
}

/* Whether a is a Python scalar, a string, None or a tuple of Python ints (``replicas._plain``). */
static int
plain_value(PyObject *a)
{
    PyTypeObject *t = Py_TYPE(a);
    if (t == &PyLong_Type || t == &PyFloat_Type || t == &PyComplex_Type || t == &PyBool_Type ||
        t == &PyUnicode_Type || a == Py_None)
        return 1;
    if (t != &PyTuple_Type)
        return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(a); i++)
        if (!PyLong_CheckExact(PyTuple_GET_ITEM(a, i)))
            return 0;
    return 1;
}

/* direct(func, args, kwargs): ``engine.replicas.direct``: ``func`` (a NumPy function that never
 * writes an argument nor returns a view of one) called by NumPy on the copies of arrays on
 * the lane, with Python scalars, strings and None as they are, and keywords (not ``out``)
 * that are each a Python scalar, a string, None or a tuple of ints (``axis=(1, 2)``),
 * wrapped; SLOW for every other case. */
static PyObject *
direct(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    EXPECT_ARGS(3, "direct(func, args, kwargs)")
    PyObject *func = args[0], *fargs = args[1], *kwargs = args[2];
    if (ArrayType == NULL || Config == NULL || SLOT(Config, c_whole_lane) != Py_True || !PyTuple_CheckExact(fargs) ||
        PyTuple_GET_SIZE(fargs) > 8 || !PyDict_CheckExact(kwargs))
        return Py_NewRef(Slow);
    if (PyDict_GET_SIZE(kwargs)) {
        Py_ssize_t pos = 0;
        PyObject *k, *val;
        while (PyDict_Next(kwargs, &pos, &k, &val))
            if (!PyUnicode_CheckExact(k) || PyUnicode_CompareWithASCIIString(k, "out") == 0 || !plain_value(val))
                return Py_NewRef(Slow);
    }
    Py_ssize_t n = PyTuple_GET_SIZE(fargs);
    PyObject *call[8];
    PyObject *made[8] = {NULL}; /* the tuples and lists of copies made here (owned) */
    PyObject *s = NULL;
    PyObject *out = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *a = PyTuple_GET_ITEM(fargs, i);
        PyTypeObject *t = Py_TYPE(a);
        if (t == ArrayType) {
            PyObject *v = lane_copy(a);
            if (v == NULL || (s != NULL && SLOT(SLOT(a, a_s), s_ctx) != SLOT(s, s_ctx)))
                goto slow;
            s = SLOT(a, a_s);
            call[i] = v;
        }
        else if ((t == &PyTuple_Type || t == &PyList_Type) && PySequence_Fast_GET_SIZE(a) > 0 &&
                 Py_TYPE(PySequence_Fast_GET_ITEM(a, 0)) == ArrayType) {
            /* A sequence of arrays on the lane (``np.hstack((a, b))``): a sequence of their copies. */
            Py_ssize_t m = PySequence_Fast_GET_SIZE(a);
            PyObject *seq = t == &PyTuple_Type ? PyTuple_New(m) : PyList_New(m);
            if (seq == NULL)
                goto release;
            made[i] = seq;
            for (Py_ssize_t j = 0; j < m; j++) {
                PyObject *e = PySequence_Fast_GET_ITEM(a, j);
                PyObject *v = Py_TYPE(e) == ArrayType ? lane_copy(e) : NULL;
                if (v == NULL || (s != NULL && SLOT(SLOT(e, a_s), s_ctx) != SLOT(s, s_ctx)))
                    goto slow;
                s = SLOT(e, a_s);
                if (t == &PyTuple_Type)
                    PyTuple_SET_ITEM(seq, j, Py_NewRef(v));
                else
                    PyList_SET_ITEM(seq, j, Py_NewRef(v));
            }
            call[i] = seq;
        }
        else if (t != &PyTuple_Type && plain_value(a))
            call[i] = a;
        else
            goto slow;
    }
    if (s == NULL)
        goto slow;
    Py_INCREF(fargs); /* (holds the arguments and their copies while NumPy runs) */
    Py_INCREF(kwargs);
    Py_INCREF(s);
    PyObject *res;
    if (PyDict_GET_SIZE(kwargs)) {
        PyObject *t = PyTuple_New(n);
        for (Py_ssize_t i = 0; t != NULL && i < n; i++)
            PyTuple_SET_ITEM(t, i, Py_NewRef(call[i]));
        res = t ? PyObject_Call(func, t, kwargs) : NULL;
        Py_XDECREF(t);
    }
    else
        res = PyObject_Vectorcall(func, call, n, NULL);
    Py_DECREF(kwargs);
    if (res != NULL) {
        out = wrap_impl(SLOT(s, s_ctx), SLOT(s, s_be), res);
        Py_DECREF(res);
    }
    Py_DECREF(s);
    Py_DECREF(fargs);
    goto release;
slow:
    out = Py_NewRef(Slow);
release:
    for (Py_ssize_t i = 0; i < n; i++)
        Py_XDECREF(made[i]);
    return out;
}

/* reduce(self, name): ``self.<name>()`` (``sum``, ``max`` ...: no axis, dtype, out, keepdims or
 * keywords) of an array on the lane, as ``whole.reduce_whole`` computes it: NumPy's method of
 * the copy, its scalar as it is; SLOW for every other case. */
static PyObject *
reduce_plain(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    EXPECT_ARGS(2, "reduce(self, name)")
    PyObject *self = args[0], *name = args[1];
    if (!lane_ready(self) || !PyUnicode_CheckExact(name))
        return Py_NewRef(Slow);
    PyObject *v = lane_copy(self);
    if (v == NULL)
        return Py_NewRef(Slow);
    Py_INCREF(self);
    PyObject *res = PyObject_CallMethodNoArgs(v, name);
    Py_DECREF(self);
    return res;
}

/* ------------------------------------------------------------------ methods
 * A LaneMethod is the class attribute ``ndarray.__getitem__`` (or ``__setitem__``): its compiled
 * case first, then the Python method it holds for every other case.  It is a method
 * descriptor, as a Python function is: CPython's slot functions call it with the instance
 * first and no bound method; ``x.__getitem__`` binds it. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *(*impl)(PyObject *, PyObject *const *, Py_ssize_t);
    PyObject *fallback;  /* the Python method */
    PyObject *ufunc;     /* an operator's ufunc (NULL for indexing) */
    PyObject *reflected; /* an operator's side: Py_True for ``__radd__``, NULL in place */
    int power;           /* ``**`` and ``**=``: NumPy's own exponents go to Python */
} LaneMethod;

/* Whether ``x ** e`` may be NumPy's ``square``, ``reciprocal`` or ``sqrt`` (operators._scalar_power). */
static int
special_power(PyObject *e)
{
    if (PyLong_CheckExact(e)) {
        int overflow;
        long v = PyLong_AsLongAndOverflow(e, &overflow);
        return !overflow && (v == 2 || v == -1);
    }
    return PyFloat_CheckExact(e) && PyFloat_AS_DOUBLE(e) == 0.5;
}

static PyObject *
lane_method_call(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    LaneMethod *m = (LaneMethod *)op;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (kwnames == NULL && n >= 1 && Py_TYPE(args[0]) == ArrayType) {
        PyObject *r;
        if (m->ufunc == NULL)
            r = m->impl(NULL, args, n);
        else if (m->impl == reduce_plain) {
            /* ``x.sum()`` (no argument: every other call is the Python method's) */
            PyObject *a[2] = {args[0], m->ufunc};
            r = n == 1 ? reduce_plain(NULL, a, 2) : Py_NewRef(Slow);
        }
        else if (n != 2)
            r = Py_NewRef(Slow);
        else if (m->power && special_power(args[1]))
            r = m->reflected == Py_False ? special_pow(args[0], args[1]) : Py_NewRef(Slow); /* (``**=``: Python) */
        else if (m->reflected == NULL) {
            PyObject *a[3] = {m->ufunc, args[0], args[1]};
            r = m->impl(NULL, a, 3);
        }
        else {
            PyObject *a[4] = {m->ufunc, args[0], args[1], m->reflected};
            r = m->impl(NULL, a, 4);
        }
        if (r != Slow) {
            if (r == Py_True && m->impl == setitem) {
                Py_DECREF(r);
                Py_RETURN_NONE; /* (``__setitem__`` returns None) */
            }
            return r;
        }
        Py_DECREF(r);
    }
    else if (m->impl == hash_method) {
        /* (a view map's or a layout's cached hash: their class is not ndarray) */
        PyObject *r = kwnames == NULL && n == 1 ? hash_method(NULL, args, 1) : Py_NewRef(Slow);
        if (r != Slow)
            return r;
        Py_DECREF(r);
    }
    return PyObject_Vectorcall(m->fallback, args, n, kwnames);
}

static PyObject *
lane_method_get(PyObject *op, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None)
        return Py_NewRef(op);
    return PyMethod_New(op, obj);
}

static void
lane_method_dealloc(PyObject *op)
{
    Py_XDECREF(((LaneMethod *)op)->fallback);
    Py_XDECREF(((LaneMethod *)op)->ufunc);
    Py_XDECREF(((LaneMethod *)op)->reflected);
    Py_TYPE(op)->tp_free(op);
}

static PyObject *
lane_method_doc(PyObject *op, void *closure)
{
    return PyObject_GetAttrString(((LaneMethod *)op)->fallback, "__doc__");
}

static PyObject *
lane_method_wrapped(PyObject *op, void *closure)
{
    return Py_NewRef(((LaneMethod *)op)->fallback);
}

/* __name__, __qualname__, __module__: the Python method's (for documentation tools and repr). */
static PyObject *
lane_method_attr(PyObject *op, void *closure)
{
    return PyObject_GetAttrString(((LaneMethod *)op)->fallback, (const char *)closure);
}

static PyGetSetDef lane_method_getset[] = {
    {"__doc__", lane_method_doc, NULL, "The Python method's docstring.", NULL},
    {"__name__", lane_method_attr, NULL, "The Python method's name.", "__name__"},
    {"__qualname__", lane_method_attr, NULL, "The Python method's qualified name.", "__qualname__"},
    {"__module__", lane_method_attr, NULL, "The Python method's module.", "__module__"},
    {"__wrapped__", lane_method_wrapped, NULL, "The Python method, which takes the cases not compiled.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject LaneMethodType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "spmdarray.core._lane.LaneMethod",
    .tp_basicsize = sizeof(LaneMethod),
    .tp_dealloc = lane_method_dealloc,
    .tp_vectorcall_offset = offsetof(LaneMethod, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_METHOD_DESCRIPTOR | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A method of ndarray: its compiled case, then the Python method for the rest.",
    .tp_descr_get = lane_method_get,
    .tp_getset = lane_method_getset,
};

/* method(name, fallback[, ufunc, side]): the LaneMethod ``__getitem__``, ``__setitem__``,
 * ``__array_ufunc__``, the reduction ``sum``, ``prod``, ``min``, ``max``, ``any`` or ``all``
 * (called without arguments: ``reduce``), or the getter of the property ``T``, ``shape``,
 * ``ndim``, ``size`` or ``dtype``, or the
 * binary operator ``__add__``, ``__radd__`` or ``__iadd__`` (and so on) of ``ufunc``, side "l",
 * "r" or "i", over the Python method ``fallback``. */
static PyObject *
method(PyObject *mod, PyObject *args)
{
    const char *name, *side = "";
    PyObject *fallback, *ufunc = NULL;
    if (!PyArg_ParseTuple(args, "sO|Os", &name, &fallback, &ufunc, &side))
        return NULL;
    PyObject *(*impl)(PyObject *, PyObject *const *, Py_ssize_t);
    PyObject *reflected = NULL;
    int named = 0; /* (ufunc is a new reference: the name of a reduction) */
    if (strcmp(name, "__getitem__") == 0 && ufunc == NULL)
        impl = getitem;
    else if (strcmp(name, "__array_ufunc__") == 0 && ufunc == NULL)
        impl = array_ufunc;
    else if (strcmp(name, "__setitem__") == 0 && ufunc == NULL)
        impl = setitem;
    else if (strcmp(name, "T") == 0 && ufunc == NULL)
        impl = transpose;
    else if (strcmp(name, "shape") == 0 && ufunc == NULL)
        impl = get_shape;
    else if (strcmp(name, "ndim") == 0 && ufunc == NULL)
        impl = get_ndim;
    else if (strcmp(name, "size") == 0 && ufunc == NULL)
        impl = get_size;
    else if (strcmp(name, "dtype") == 0 && ufunc == NULL)
        impl = get_dtype;
    else if (strcmp(name, "__hash__") == 0 && ufunc == NULL)
        impl = hash_method;
    else if (ufunc == NULL && (strcmp(name, "sum") == 0 || strcmp(name, "prod") == 0 || strcmp(name, "min") == 0 ||
                               strcmp(name, "max") == 0 || strcmp(name, "any") == 0 || strcmp(name, "all") == 0)) {
        impl = reduce_plain;
        ufunc = PyUnicode_InternFromString(name); /* (the method's name, held where an operator holds its ufunc) */
        if (ufunc == NULL)
            return NULL;
        named = 1;
    }
    /* An operator: its side given, not read from its name (``__rshift__`` is not a reflected ``shift``). */
    else if (ufunc != NULL && strcmp(side, "i") == 0)
        impl = inplace;
    else if (ufunc != NULL && (strcmp(side, "l") == 0 || strcmp(side, "r") == 0)) {
        impl = binary;
        reflected = side[0] == 'r' ? Py_True : Py_False;
    }
    else
        return PyErr_Format(PyExc_ValueError, "method: no compiled %s (with ufunc %R, side '%s': 'l', 'r' or 'i')",
                            name, ufunc, side);
    LaneMethod *m = PyCallable_Check(fallback) ? PyObject_New(LaneMethod, &LaneMethodType) : NULL;
    if (m == NULL) {
        if (named)
            Py_DECREF(ufunc);
        if (!PyCallable_Check(fallback))
            PyErr_Format(PyExc_TypeError, "method: the fallback %R is not callable", fallback);
        return NULL;
    }
    m->vectorcall = lane_method_call;
    m->impl = impl;
    m->fallback = Py_NewRef(fallback);
    m->ufunc = ufunc && !named ? Py_NewRef(ufunc) : ufunc;
    m->reflected = reflected ? Py_NewRef(reflected) : NULL;
    m->power = strcmp(name, "__pow__") == 0 || strcmp(name, "__ipow__") == 0;
    return (PyObject *)m;
}

/* may_share(a, b): NumPy's ``may_share_memory(a, b)`` as assign_region computes it from the
 * arrays' fields (None where their layout is not known). */
static PyObject *
may_share(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    EXPECT_ARGS(2, "may_share(a, b)")
    int r = np_may_share(args[0], args[1]);
    if (r == -1)
        return NULL;
    return r == -2 ? Py_NewRef(Py_None) : PyBool_FromLong(r);
}

/* numpy_layout(): whether init() found NumPy's arrays laid out as NpFields (wrap reads their
 * flags and dtype from it; otherwise through attributes). */
static PyObject *
numpy_layout(PyObject *mod, PyObject *unused)
{
    return PyBool_FromLong(NpLayoutOk > 0 && DescrLayout > 0);
}

static PyMethodDef methods[] = {
    {"may_share", (PyCFunction)(void (*)(void))may_share, METH_FASTCALL,
     "may_share(a, b): numpy.may_share_memory(a, b) of two NumPy arrays read from their fields, as the lane's "
     "assignments ask it (None where their layout is not known).  Not collective."},
    {"numpy_layout", numpy_layout, METH_NOARGS,
     "numpy_layout(): whether NumPy's arrays have the layout wrap reads flags and dtypes from.  Not collective."},
    {"init", init, METH_VARARGS,
     "init(Storage, numpy.ndarray, kinds, config, wrap, numpy_scalars, slow, readers, numbers, may_share_memory, "
     "Perm, square, reciprocal, sqrt, numpy_ints): the classes, tables and functions the lane uses (whole.LANE_INIT).  "
     "Not collective."},
    {"setitem", (PyCFunction)(void (*)(void))setitem, METH_FASTCALL,
     "setitem(self, key, value): a number written into a replicated array, or the store-back of an in-place "
     "operator on a view (True), or SLOW.  Not collective."},
    {"inplace", (PyCFunction)(void (*)(void))inplace, METH_FASTCALL,
     "inplace(ufunc, self, other): an in-place operator on the lane (self returned), or SLOW.  Not collective."},
    {"register", register_array, METH_VARARGS,
     "register(ndarray, min_elide_bytes): the array class the lane makes, and the size from which the Python "
     "operators try NumPy's temporary elision.  Not collective."},
    {"wrap", (PyCFunction)(void (*)(void))wrap, METH_FASTCALL,
     "wrap(ctx, be, res): spmdarray.core.whole.wrap, its usual case in C.  Not collective."},
    {"binary", (PyCFunction)(void (*)(void))binary, METH_FASTCALL,
     "binary(ufunc, self, other, reflected): a binary operator on the lane, or SLOW.  Not collective."},
    {"getitem", (PyCFunction)(void (*)(void))getitem, METH_FASTCALL,
     "getitem(self, key): ndarray.__getitem__ of a replicated array with integers and slices, or SLOW.  "
     "Not collective."},
    {"array_ufunc", (PyCFunction)(void (*)(void))array_ufunc, METH_FASTCALL,
     "array_ufunc(self, ufunc, method, *inputs): a ufunc called on arrays on the lane and numbers, or SLOW.  "
     "Not collective."},
    {"direct", (PyCFunction)(void (*)(void))direct, METH_FASTCALL,
     "direct(func, args, kwargs): a pure NumPy function on arrays on the lane, or SLOW.  Not collective."},
    {"reduce", (PyCFunction)(void (*)(void))reduce_plain, METH_FASTCALL,
     "reduce(self, name): a full reduction method without arguments on the lane, or SLOW.  Not collective."},
    {"init_rows", init_rows, METH_VARARGS,
     "init_rows(ViewMap, snap): the view map class and the row parts' snap (spmdarray.core.rows), for the split "
     "row parts served from their copies.  Not collective."},
    {"method", method, METH_VARARGS,
     "method(name, fallback[, ufunc, side]): ndarray.__getitem__, __setitem__, __array_ufunc__, a reduction without "
     "arguments, the getter of T, shape, ndim, size or dtype, an operator of ufunc, or the __hash__ of ViewMap and "
     "Layout, compiled, over the Python method fallback.  Not collective."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_lane", "The whole-array lane's hot paths in C.", -1,
                                    methods};

PyMODINIT_FUNC
PyInit__lane(void)
{
    str_shape = PyUnicode_InternFromString("shape");
    str_dtype = PyUnicode_InternFromString("dtype");
    str_flags = PyUnicode_InternFromString("flags");
    str_c_contiguous = PyUnicode_InternFromString("c_contiguous");
    str_owndata = PyUnicode_InternFromString("owndata");
    str_writeable = PyUnicode_InternFromString("writeable");
    str_nbytes = PyUnicode_InternFromString("nbytes");
    str_kind = PyUnicode_InternFromString("kind");
    str_copy = PyUnicode_InternFromString("copy");
    str_map = PyUnicode_InternFromString("_map");
    str_T = PyUnicode_InternFromString("T");
    str_ndim = PyUnicode_InternFromString("ndim");
    str_size = PyUnicode_InternFromString("size");
    zero = PyLong_FromLong(0);
    one = PyLong_FromLong(1);
    if (!str_shape || !str_dtype || !str_flags || !str_c_contiguous || !str_owndata || !str_writeable || !str_nbytes || !str_kind || !str_copy || !str_map || !str_T || !str_ndim || !str_size ||
        !zero || !one)
        return NULL;
    if (PyType_Ready(&LaneMethodType) < 0)
        return NULL;
    return PyModule_Create(&module);
}
