//! The host calls a request makes, in one place, so that a bench build
//! (feature `bench-profile`) can count them per request.

use std::time::SystemTime;

use proxy_wasm::hostcalls;
use proxy_wasm::types::{BufferType, Bytes, LogLevel, MapType, Status};

use crate::profile::{self, Call};

pub fn request_headers() -> Result<Vec<(String, Bytes)>, Status> {
    profile::call(Call::GetHeaders);
    hostcalls::get_map_bytes(MapType::HttpRequestHeaders)
}

pub fn remove_request_header(name: &str) -> Result<(), Status> {
    profile::call(Call::RemoveHeader);
    hostcalls::remove_map_value(MapType::HttpRequestHeaders, name)
}

pub fn set_request_header(name: &str, value: &str) -> Result<(), Status> {
    profile::call(Call::SetHeader);
    hostcalls::set_map_value(MapType::HttpRequestHeaders, name, Some(value))
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
