//! A redis-py reply as the core's one reply shape (`toolctx_core::redis::Reply`),
//! for every command the helpers send: what it means is the core's to say.

use pyo3::exceptions::PyBaseException;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyInt, PyString};
use toolctx_core::redis::Reply;

/// Hands `reply` to `read` as the core's `Reply`. redis-py gives `SET`'s
/// `+OK` as `True` (its response callback; `False` is no reply toolctx
/// expects), nil as `None`, strings as `bytes` (or `str` when decoding),
/// integers as `int`; an exception instance is an error reply; anything
/// else is another shape, which no command expects.
pub fn read_reply<R>(reply: &Bound<'_, PyAny>, read: impl FnOnce(Reply<'_>) -> R) -> PyResult<R> {
    if reply.is_none() {
        return Ok(read(Reply::Nil));
    }
    if reply.is_instance_of::<PyBool>() {
        return Ok(read(if reply.is_truthy()? {
            Reply::Status("OK")
        } else {
            Reply::Other
        }));
    }
    if let Ok(b) = reply.cast::<PyBytes>() {
        return Ok(read(Reply::Bulk(b.as_bytes())));
    }
    if let Ok(s) = reply.cast::<PyString>() {
        return Ok(read(Reply::Status(s.to_str()?)));
    }
    if reply.is_instance_of::<PyInt>() {
        return Ok(read(
            reply.extract::<i64>().map_or(Reply::Other, Reply::Integer),
        ));
    }
    if reply.is_instance_of::<PyBaseException>() {
        let text = reply.str()?.to_string();
        return Ok(read(Reply::Error(&text)));
    }
    Ok(read(Reply::Other))
}
