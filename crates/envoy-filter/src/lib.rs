#![doc = include_str!("../README.md")]
// Denied, not forbidden: the host ABI needs `unsafe` in two places, each
// allowed where it stands (`host`, the module's entry point).
#![deny(unsafe_code)]

use proxy_wasm::traits::RootContext;
use proxy_wasm::types::LogLevel;

#[allow(unsafe_code)]
mod host;
mod http_context;
mod metrics;
mod profile;
pub mod replay;
mod reply;
mod request_headers;
mod root_context;
/// The plugin configuration (shared with the ext_authz service).
pub use toolctx_gateway_config as settings;
mod watch;

/// The module's entry point: the SDK's `main!` writes `_initialize` with
/// `#[no_mangle]` and, on WASI, an `unsafe` call of the constructors.
#[allow(unsafe_code)]
mod entry {
    use super::{log, root_context, LogLevel, RootContext};

    proxy_wasm::main! {{
        std::panic::set_hook(Box::new(|info| {
            log(LogLevel::Critical, &toolctx_gateway_config::panic_line("the VM stops and requests fail closed", info));
        }));
        proxy_wasm::set_root_context(|_| -> Box<dyn RootContext> {
            Box::new(root_context::Root::default())
        });
    }}
}

fn log(level: LogLevel, message: &str) {
    host::log(level, message);
}
