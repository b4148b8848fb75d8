/* bootlab._native.dmesgscan: dmesg_scan.c's columns for Python, as bytearrays of int64
 * (or uint8) that numpy views with frombuffer; no numpy headers needed to build. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "dmesg_scan.h"

static PyObject *column(Py_ssize_t count, size_t item)
{
	return PyByteArray_FromStringAndSize(NULL, count * (Py_ssize_t)item);
}

static int64_t *int64s(PyObject *array)
{
	return (int64_t *)PyByteArray_AS_STRING(array);
}

static PyObject *lines(PyObject *self, PyObject *args)
{
	Py_buffer text;
	PyObject *start = NULL, *end = NULL, *nbytes = NULL, *t = NULL, *result = NULL;
	long count;

	(void)self;
	if (!PyArg_ParseTuple(args, "y*", &text))
		return NULL;
	count = dmesg_count_lines(text.buf, (size_t)text.len);
	if (count < 0) {
		PyBuffer_Release(&text);
		Py_RETURN_NONE;
	}
	start = column(count, 8);
	end = column(count, 8);
	nbytes = column(count, 8);
	t = column(count, 8);
	if (start && end && nbytes && t) {
		Py_BEGIN_ALLOW_THREADS
		dmesg_lines(text.buf, (size_t)text.len, (size_t)count, int64s(start), int64s(end), int64s(nbytes),
			    int64s(t));
		Py_END_ALLOW_THREADS
		result = PyTuple_Pack(4, start, end, nbytes, t);
	}
	Py_XDECREF(start);
	Py_XDECREF(end);
	Py_XDECREF(nbytes);
	Py_XDECREF(t);
	PyBuffer_Release(&text);
	return result;
}

/* A tuple of bytes as dmesg_words; the bytes stay owned by the tuple. */
static int words_of(PyObject *tuple, struct dmesg_words *words)
{
	Py_ssize_t count;

	if (!PyTuple_Check(tuple)) {
		PyErr_SetString(PyExc_TypeError, "words: a tuple of bytes");
		return -1;
	}
	count = PyTuple_GET_SIZE(tuple);
	words->count = (size_t)count;
	words->text = PyMem_Calloc((size_t)count + 1, sizeof(*words->text));
	words->len = PyMem_Calloc((size_t)count + 1, sizeof(*words->len));
	if (!words->text || !words->len) {
		PyErr_NoMemory();
		return -1;
	}
	for (Py_ssize_t k = 0; k < count; k++) {
		PyObject *word = PyTuple_GET_ITEM(tuple, k);

		if (!PyBytes_Check(word) || PyBytes_GET_SIZE(word) == 0) {
			PyErr_SetString(PyExc_TypeError, "words: a tuple of non-empty bytes");
			return -1;
		}
		((const uint8_t **)words->text)[k] = (const uint8_t *)PyBytes_AS_STRING(word);
		((size_t *)words->len)[k] = (size_t)PyBytes_GET_SIZE(word);
	}
	return 0;
}

static void words_free(struct dmesg_words *words)
{
	PyMem_Free((void *)words->text);
	PyMem_Free((void *)words->len);
}

static PyObject *name_list(const Py_buffer *text, const struct dmesg_names *names)
{
	PyObject *list = PyList_New((Py_ssize_t)names->count);

	for (size_t i = 0; list && i < names->count; i++) {
		PyObject *name = PyUnicode_DecodeASCII((const char *)text->buf + names->at[i], names->len[i], NULL);

		if (!name) {
			Py_CLEAR(list);
			break;
		}
		PyList_SET_ITEM(list, (Py_ssize_t)i, name);
	}
	return list;
}

static PyObject *messages(PyObject *self, PyObject *args)
{
	Py_buffer text, offset, end;
	PyObject *words_tuple, *starts_tuple, *hints_tuple, *kind = NULL, *fn = NULL, *a = NULL, *b = NULL;
	PyObject *names_list = NULL, *result = NULL;
	struct dmesg_words words = { 0 }, starts = { 0 }, hints = { 0 };
	struct dmesg_names names = { 0 };
	Py_ssize_t count;
	int failed = 0;

	(void)self;
	if (!PyArg_ParseTuple(args, "y*y*y*O!O!O!", &text, &offset, &end, &PyTuple_Type, &words_tuple, &PyTuple_Type,
			      &starts_tuple, &PyTuple_Type, &hints_tuple))
		return NULL;
	count = offset.len / 8;
	if (offset.len % 8 || end.len != offset.len) {
		PyErr_SetString(PyExc_ValueError, "offsets and ends: int64 columns of one length");
		goto out;
	}
	if (words_of(words_tuple, &words) || words_of(starts_tuple, &starts) || words_of(hints_tuple, &hints))
		goto out;
	names.nslots = dmesg_name_slots((size_t)count);
	names.at = PyMem_Calloc(2 * (size_t)count + 1, sizeof(int64_t));
	names.len = PyMem_Calloc(2 * (size_t)count + 1, sizeof(int64_t));
	names.slots = PyMem_Calloc(names.nslots, sizeof(int64_t));
	kind = column(count, 1);
	fn = column(count, 8);
	a = column(count, 8);
	b = column(count, 8);
	if (!names.at || !names.len || !names.slots) {
		PyErr_NoMemory();
		goto out;
	}
	if (!kind || !fn || !a || !b)
		goto out;
	Py_BEGIN_ALLOW_THREADS
	failed = dmesg_messages(text.buf, (size_t)text.len, (size_t)count, offset.buf, end.buf, &words, &starts, &hints,
				(uint8_t *)PyByteArray_AS_STRING(kind), int64s(fn), int64s(a), int64s(b), &names);
	Py_END_ALLOW_THREADS
	if (failed) {
		PyErr_SetString(PyExc_ValueError, "a message outside the text, or more than 64 words and hints or starts");
		goto out;
	}
	names_list = name_list(&text, &names);
	if (names_list)
		result = PyTuple_Pack(5, kind, fn, a, b, names_list);
out:
	Py_XDECREF(kind);
	Py_XDECREF(fn);
	Py_XDECREF(a);
	Py_XDECREF(b);
	Py_XDECREF(names_list);
	PyMem_Free(names.at);
	PyMem_Free(names.len);
	PyMem_Free(names.slots);
	words_free(&words);
	words_free(&starts);
	words_free(&hints);
	PyBuffer_Release(&text);
	PyBuffer_Release(&offset);
	PyBuffer_Release(&end);
	return result;
}

/* A text as bytes: a bytes-like object's buffer, or an ASCII str's own characters (one
 * byte each: a log kept as a str is not copied to be looked through). */
static int text_of(PyObject *obj, Py_buffer *view)
{
	if (!PyUnicode_Check(obj))
		return PyObject_GetBuffer(obj, view, PyBUF_SIMPLE);
	if (!PyUnicode_IS_ASCII(obj)) {
		PyErr_SetString(PyExc_ValueError, "text: a str of ASCII characters only");
		return -1;
	}
	return PyBuffer_FillInfo(view, obj, PyUnicode_1BYTE_DATA(obj), PyUnicode_GET_LENGTH(obj), 1, PyBUF_SIMPLE);
}

static PyObject *holding(PyObject *self, PyObject *args)
{
	Py_buffer text = { 0 }, start, end;
	PyObject *text_obj, *words_tuple, *masks = NULL;
	struct dmesg_words words = { 0 };
	Py_ssize_t count;

	(void)self;
	if (!PyArg_ParseTuple(args, "Oy*y*O!", &text_obj, &start, &end, &PyTuple_Type, &words_tuple))
		return NULL;
	if (text_of(text_obj, &text))
		goto out;
	count = start.len / 8;
	if (start.len % 8 || end.len != start.len || PyTuple_GET_SIZE(words_tuple) > 64) {
		PyErr_SetString(PyExc_ValueError, "starts and ends: int64 columns of one length; at most 64 words");
		goto out;
	}
	if (words_of(words_tuple, &words))
		goto out;
	for (Py_ssize_t i = 0; i < count; i++) {
		const int64_t from = ((const int64_t *)start.buf)[i], stop = ((const int64_t *)end.buf)[i];

		if (from < 0 || stop > text.len || from > stop) {
			PyErr_SetString(PyExc_ValueError, "a line outside the text");
			goto out;
		}
	}
	masks = column(count, 8);
	if (!masks)
		goto out;
	Py_BEGIN_ALLOW_THREADS
	dmesg_holding(text.buf, (size_t)count, start.buf, end.buf, &words, (uint64_t *)PyByteArray_AS_STRING(masks));
	Py_END_ALLOW_THREADS
out:
	words_free(&words);
	if (text.obj)
		PyBuffer_Release(&text);
	PyBuffer_Release(&start);
	PyBuffer_Release(&end);
	return masks;
}

static PyObject *pair(PyObject *self, PyObject *args)
{
	Py_buffer line, key;
	Py_ssize_t n_calls, count;
	PyObject *answered = NULL, *open = NULL, *open_len = NULL, *result = NULL;
	long stacks = 0;

	(void)self;
	if (!PyArg_ParseTuple(args, "y*y*n", &line, &key, &n_calls))
		return NULL;
	count = line.len / 8;
	if (line.len % 8 || key.len != line.len || n_calls < 0 || n_calls > count) {
		PyErr_SetString(PyExc_ValueError, "lines and keys: int64 columns of one length, n_calls of them calls");
		goto out;
	}
	answered = column(count - n_calls, 8);
	open = column(n_calls, 8);
	open_len = column(n_calls, 8);
	if (!answered || !open || !open_len)
		goto out;
	Py_BEGIN_ALLOW_THREADS
	stacks = dmesg_pair((size_t)count, (size_t)n_calls, line.buf, key.buf, int64s(answered), int64s(open),
			    int64s(open_len));
	Py_END_ALLOW_THREADS
	if (stacks < 0)
		PyErr_SetString(PyExc_ValueError, "a negative function key, or no memory");
	else
		result = Py_BuildValue("OOOl", answered, open, open_len, stacks);
out:
	Py_XDECREF(answered);
	Py_XDECREF(open);
	Py_XDECREF(open_len);
	PyBuffer_Release(&line);
	PyBuffer_Release(&key);
	return result;
}

static PyObject *find(PyObject *self, PyObject *args)
{
	Py_buffer text, needle;
	Py_ssize_t from = 0, to = PY_SSIZE_T_MAX;
	int64_t at = -1;

	(void)self;
	if (!PyArg_ParseTuple(args, "y*y*|nn", &text, &needle, &from, &to))
		return NULL;
	if (needle.len == 0 || from < 0 || to < 0) {
		PyErr_SetString(PyExc_ValueError, "find: a needle of one byte or more, bounds from 0");
		PyBuffer_Release(&text);
		PyBuffer_Release(&needle);
		return NULL;
	}
	Py_BEGIN_ALLOW_THREADS
	at = dmesg_find(text.buf, (size_t)text.len, needle.buf, (size_t)needle.len, (size_t)from, (size_t)to);
	Py_END_ALLOW_THREADS
	PyBuffer_Release(&text);
	PyBuffer_Release(&needle);
	return PyLong_FromLongLong(at);
}

static PyMethodDef methods[] = {
	{ "lines", lines, METH_VARARGS,
	  "lines(text) -> (start, end, nbytes, t) int64 columns, or None when the text needs the per-line path" },
	{ "messages", messages, METH_VARARGS,
	  "messages(text, offset, end, words, starts, hints) -> (kind uint8, fn, a, b int64 columns, function texts)" },
	{ "holding", holding, METH_VARARGS,
	  "holding(text, start, end, words) -> uint64 column: per line, bit k set when it holds words[k] "
	  "(text: bytes-like, or a str of ASCII only)" },
	{ "find", find, METH_VARARGS,
	  "find(text, needle[, start[, end]]) -> where needle first lies wholly in text[start:end], or -1 "
	  "(bytes.find's answer, by glibc's memmem)" },
	{ "pair", pair, METH_VARARGS,
	  "pair(line, key, n_calls) -> (answered, open, open_len int64 columns, stacks): calls paired with "
	  "returns as a stack per function in line order (dmesg_scan.h's dmesg_pair)" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT, "dmesgscan", "The plain dmesg scanner of sources/dmesg_bulk.py.", -1, methods,
	NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_dmesgscan(void)
{
	return PyModule_Create(&module);
}
