//! Python values in, Python values out: headers and bodies as the core
//! reads them, JSON text for settings and claims, the core's JSON values as
//! Python objects, the clock.

use std::borrow::Cow;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple,
};
use toolctx_core::json::{self, write_str, Value};

/// One request header, name and value as bytes.
pub type Header = (Vec<u8>, Vec<u8>);

/// Bytes of a `str` (UTF-8) or of a bytes-like value.
pub fn bytes_of(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u8>> {
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(s.to_str()?.as_bytes().to_vec());
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(b.to_vec());
    }
    if let Ok(v) = obj.extract::<Vec<u8>>() {
        if !obj.is_instance_of::<PyList>() && !obj.is_instance_of::<PyTuple>() {
            return Ok(v);
        }
    }
    Err(PyTypeError::new_err(format!("{what} must be str or bytes")))
}

/// The body as bytes: `bytes`, `bytearray`, `memoryview` or `str` (UTF-8).
/// A `bytes` body is read in place (it is immutable, and the caller's
/// reference keeps it alive while the core reads it); others are copied.
pub fn body_of<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(b.as_bytes()));
    }
    bytes_of(obj, "body").map(Cow::Owned)
}

/// Request headers in any of the shapes Python HTTP stacks hand out, every
/// pair kept (a header sent twice must stay twice): an ASGI list of
/// `(bytes, bytes)`, any iterable of pairs, a `dict`, or a multi-valued
/// headers object (`multi_items()` in httpx and Starlette's
/// `MutableHeaders`, `raw` in Starlette's `Headers`).
pub fn headers_of(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Header>> {
    // A plain list or tuple of pairs first: each `hasattr` below that misses
    // raises and clears an AttributeError (about 5k instructions each, most
    // of a verify's binding cost).
    let pairs = if obj.is_exact_instance_of::<PyList>() || obj.is_exact_instance_of::<PyTuple>() {
        obj.clone()
    } else if let Ok(d) = obj.cast::<PyDict>() {
        d.items().into_any()
    } else if obj.hasattr("raw")? && !obj.is_instance_of::<PyList>() {
        obj.getattr("raw")?
    } else if obj.hasattr("multi_items")? {
        obj.call_method0("multi_items")?
    } else if obj.hasattr("items")? && !obj.is_instance_of::<PyList>() {
        obj.call_method0("items")?
    } else {
        obj.clone()
    };
    let mut out = Vec::new();
    for pair in pairs.try_iter()? {
        let pair = pair?;
        let tuple = pair
            .cast::<PyTuple>()
            .map(|t| t.to_owned())
            .or_else(|_| pair.cast::<PyList>().map(|l| l.to_tuple()))
            .map_err(|_| PyTypeError::new_err("headers must be (name, value) pairs"))?;
        if tuple.len() != 2 {
            return Err(PyTypeError::new_err("headers must be (name, value) pairs"));
        }
        let name = bytes_of(&tuple.get_item(0)?, "a header name")?;
        let value = bytes_of(&tuple.get_item(1)?, "a header value")?;
        out.push((name, value));
    }
    Ok(out)
}

/// `now` as Unix seconds: an `int` (not a `bool`, not a `float`: the
/// contract's times are integers), or the system clock when `None`.
pub fn now_of(now: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
    match now {
        None => system_now(),
        Some(n) if n.is_none() => system_now(),
        Some(n) if n.is_instance_of::<PyBool>() || !n.is_instance_of::<PyInt>() => {
            Err(PyTypeError::new_err("now must be an int (Unix seconds)"))
        }
        Some(n) => n
            .extract::<u64>()
            .map_err(|_| PyValueError::new_err("now must be a non-negative int (Unix seconds)")),
    }
}

fn system_now() -> PyResult<u64> {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .map_err(|_| PyValueError::new_err("the system clock is before 1970"))
}

/// The JSON text of a Python value (`None`, `bool`, `int`, `float`, `str`,
/// `decimal.Decimal`, lists, tuples and `dict`s with `str` keys), for the core to read: the
/// core, not this function, decides what the value may be.
pub fn json_text(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    let mut out = String::new();
    write_json(obj, &mut out, 0)?;
    Ok(out)
}

fn write_json(obj: &Bound<'_, PyAny>, out: &mut String, depth: usize) -> PyResult<()> {
    if depth > 64 {
        return Err(PyValueError::new_err("value nested too deeply"));
    }
    if obj.is_none() {
        out.push_str("null");
    } else if let Ok(b) = obj.cast::<PyBool>() {
        out.push_str(if b.is_true() { "true" } else { "false" });
    } else if obj.is_instance_of::<PyInt>() {
        out.push_str(obj.str()?.to_str()?);
    } else if let Ok(f) = obj.cast::<PyFloat>() {
        let v = f.value();
        if !v.is_finite() {
            return Err(PyValueError::new_err(format!("{v} has no JSON form")));
        }
        out.push_str(obj.repr()?.to_str()?);
    } else if let Ok(s) = obj.cast::<PyString>() {
        write_str(s.to_str()?, out);
    } else if is_decimal(obj)? {
        // `Decimal` keeps a number exactly as written (json.loads with
        // parse_float=Decimal); its str() is valid JSON when finite.
        if !obj.call_method0("is_finite")?.is_truthy()? {
            return Err(PyValueError::new_err(
                "a non-finite Decimal has no JSON form",
            ));
        }
        out.push_str(obj.str()?.to_str()?);
    } else if let Ok(d) = obj.cast::<PyDict>() {
        out.push('{');
        for (i, (k, v)) in d.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let key = k
                .cast::<PyString>()
                .map_err(|_| PyTypeError::new_err("object keys must be str"))?;
            write_str(key.to_str()?, out);
            out.push(':');
            write_json(&v, out, depth + 1)?;
        }
        out.push('}');
    } else if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        out.push('[');
        for (i, item) in obj.try_iter()?.enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_json(&item?, out, depth + 1)?;
        }
        out.push(']');
    } else {
        return Err(PyTypeError::new_err(format!(
            "a {} has no JSON form",
            obj.get_type().name()?
        )));
    }
    Ok(())
}

fn is_decimal(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    let decimal = obj.py().import("decimal")?.getattr("Decimal")?;
    obj.is_instance(&decimal)
}

/// A core JSON value as Python: objects as `dict`, arrays as `list`,
/// integers as `int` (any size), other numbers as `float`.
pub fn to_py<'py>(py: Python<'py>, v: &Value<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(text) => number(py, text)?,
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(members) => {
            let dict = PyDict::new(py);
            for (k, item) in members {
                dict.set_item(&**k, to_py(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

fn number<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    let builtins = py.import("builtins")?;
    if text.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        builtins.getattr("int")?.call1((text,))
    } else {
        builtins.getattr("float")?.call1((text,))
    }
}

/// JSON text (as the core writes it) as a Python value.
pub fn parse_to_py<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    let v = json::parse(text.as_bytes()).map_err(|e| PyValueError::new_err(e.to_string()))?;
    to_py(py, &v)
}
