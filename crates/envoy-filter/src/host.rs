//! The host calls a request makes, in one place, so that a bench build
//! (feature `bench-profile`) can count them per request.

use std::time::SystemTime;

use proxy_wasm::hostcalls;
use proxy_wasm::types::{BufferType, Bytes, LogLevel, MapType, Status};

use crate::profile::{self, Call};

#[link(wasm_import_module = "env")]
extern "C" {
    // The same import the SDK declares (its `get_map_bytes` copies every
    // name and value into a `String` and a `Vec` of their own, and panics
    // on an unexpected status).
    fn proxy_get_header_map_pairs(
        map_type: MapType,
        return_map_data: *mut *mut u8,
        return_map_size: *mut usize,
    ) -> Status;
}

/// The request headers as Envoy serialises them, in one buffer: read them
/// with [`pairs`], which borrows names and values from it.
pub fn request_headers() -> Result<Vec<u8>, Status> {
    profile::call(Call::GetHeaders);
    let mut data: *mut u8 = std::ptr::null_mut();
    let mut size: usize = 0;
    // SAFETY: on `Ok` the host has written `size` bytes to memory it took
    // from `proxy_on_memory_allocate`, the SDK's allocator, which hands out
    // a `Vec<u8>` of capacity `size` and forgets it; the `Vec` is rebuilt
    // here exactly as the SDK's own `get_map_bytes` does.
    unsafe {
        match proxy_get_header_map_pairs(MapType::HttpRequestHeaders, &mut data, &mut size) {
            Status::Ok if data.is_null() => Ok(Vec::new()),
            Status::Ok => Ok(Vec::from_raw_parts(data, size, size)),
            status => Err(status),
        }
    }
}

/// `(name, value)` pairs borrowed from a header block of
/// [`request_headers`]: a little-endian u32 count, a (name length, value
/// length) pair of u32 for each header, then each name and each value
/// followed by a NUL. `None` when the block is not well formed.
pub fn pairs(block: &[u8]) -> Option<Vec<(&[u8], &[u8])>> {
    if block.is_empty() {
        return Some(Vec::new());
    }
    let word = |at: usize| -> Option<usize> {
        let b: [u8; 4] = block.get(at..at.checked_add(4)?)?.try_into().ok()?;
        usize::try_from(u32::from_le_bytes(b)).ok()
    };
    let count = word(0)?;
    let mut data = count.checked_mul(8)?.checked_add(4)?;
    if data > block.len() {
        return None;
    }
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let (name_len, value_len) = (word(4 + i * 8)?, word(8 + i * 8)?);
        let name = block.get(data..data.checked_add(name_len)?)?;
        data += name_len + 1;
        let value = block.get(data..data.checked_add(value_len)?)?;
        data += value_len + 1;
        out.push((name, value));
    }
    (data == block.len()).then_some(out)
}

pub fn remove_request_header(name: &str) -> Result<(), Status> {
    profile::call(Call::RemoveHeader);
    hostcalls::remove_map_value(MapType::HttpRequestHeaders, name)
}

/// Adds a header; the filter removed any the caller sent under this name
/// at the headers, so adding is setting (and Envoy need not look for one to
/// replace).
pub fn add_request_header(name: &str, value: &str) -> Result<(), Status> {
    profile::call(Call::SetHeader);
    hostcalls::add_map_value(MapType::HttpRequestHeaders, name, value)
}

pub fn request_body(start: usize, max: usize) -> Result<Option<Bytes>, Status> {
    profile::call(Call::GetBody);
    hostcalls::get_buffer(BufferType::HttpRequestBody, start, max)
}

pub fn now() -> Result<SystemTime, Status> {
    profile::call(Call::Clock);
    hostcalls::get_current_time()
}

pub fn bump(metric: u32) {
    profile::call(Call::Metric);
    let _ = hostcalls::increment_metric(metric, 1);
}

pub fn log(level: LogLevel, message: &str) {
    profile::call(Call::Log);
    let _ = hostcalls::log(level, message);
}

/// A local reply; `Err` when Envoy could not send it.
pub fn reply(status: u16, headers: Vec<(&str, &str)>, body: &[u8]) -> Result<(), Status> {
    profile::call(Call::Reply);
    hostcalls::send_http_response(u32::from(status), headers, Some(body))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::pairs;

    fn block(headers: &[(&str, &str)]) -> Vec<u8> {
        let mut out = u32::try_from(headers.len()).unwrap().to_le_bytes().to_vec();
        for (n, v) in headers {
            out.extend(u32::try_from(n.len()).unwrap().to_le_bytes());
            out.extend(u32::try_from(v.len()).unwrap().to_le_bytes());
        }
        for (n, v) in headers {
            out.extend(n.bytes().chain([0]).chain(v.bytes()).chain([0]));
        }
        out
    }

    #[test]
    fn header_blocks_are_read_in_place() {
        let h = [(":method", "POST"), ("x-a", ""), ("x-a", "two")];
        let b = block(&h);
        let got = pairs(&b).unwrap();
        let want: Vec<(&[u8], &[u8])> = h
            .iter()
            .map(|(n, v)| (n.as_bytes(), v.as_bytes()))
            .collect();
        assert_eq!(got, want);
        assert_eq!(pairs(&[]).unwrap(), vec![]);
        assert_eq!(pairs(&block(&[])).unwrap(), vec![]);
        // Truncated anywhere, or with bytes left over: not well formed.
        for cut in 1..b.len() {
            assert_eq!(pairs(&b[..cut]), None, "cut at {cut}");
        }
        let mut longer = b.clone();
        longer.push(0);
        assert_eq!(pairs(&longer), None);
        let mut huge = b;
        huge[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(pairs(&huge), None);
    }
}
