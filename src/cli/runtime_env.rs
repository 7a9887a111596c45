//! ONNX Runtime 1.31 on Linux reports telemetry to Microsoft's collector (it looks the host up as
//! soon as a model runs) unless `ORT_DISABLE_TELEMETRY` is set in the process environment when
//! the runtime starts; its own switch (`DisableTelemetryEvents`) does not stop that. refrain sends
//! nothing anywhere, and setting a variable inside a running process is not safe Rust, so a
//! process started without it starts itself again, once, with it set: same arguments, same open
//! file descriptors (an MCP client's stdio pipes stay connected).

use std::ffi::OsString;

/// The variable ONNX Runtime reads.
pub const VAR: &str = "ORT_DISABLE_TELEMETRY";

/// Replaces this process with itself plus `ORT_DISABLE_TELEMETRY=1` when that is not set yet;
/// returns (and carries on without) only when that cannot be done.
pub fn ensure_telemetry_off() {
    if std::env::var_os(VAR).is_some() {
        return;
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let Ok(exe) = std::env::current_exe() else { return };
        let args: Vec<OsString> = std::env::args_os().skip(1).collect();
        let err = std::process::Command::new(exe).args(args).env(VAR, "1").exec();
        // exec returns only on failure; the runtime then keeps its default.
        let _ = err;
    }
}
