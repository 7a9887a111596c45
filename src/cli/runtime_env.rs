//! The process environment refrain needs set before it starts, which a running process cannot set
//! for itself in safe Rust: a process started without it starts itself again, once, with it set
//! (same arguments, same open file descriptors: an MCP client's stdio pipes stay connected).
//!
//! - ONNX Runtime 1.31 on Linux reports telemetry to Microsoft's collector (it looks the host up
//!   as soon as a model runs) unless `ORT_DISABLE_TELEMETRY` is set when the runtime starts; its
//!   own switch (`DisableTelemetryEvents`) does not stop that. refrain sends nothing anywhere.
//! - glibc's malloc raises its mmap threshold to the size of any large block freed, so blocks
//!   allocated after that come from the heap, and freed ones stay resident while anything
//!   allocated later sits above them. Loading the two models frees tens of MB of such blocks
//!   (ONNX Runtime's copies of the model while it optimises it): with the threshold fixed
//!   (`GLIBC_TUNABLES`, read at process start only) they go back to the system, and a server at
//!   100k entries holds ~60 MiB less for its whole life, for the same speed. Fixing it also fixes
//!   the trim threshold, at 128 KiB unless set: the heap's top was then given back and taken again
//!   on every few frees, and the models took twice as long to load; at 8 MiB they load as fast
//!   as before.

use std::ffi::{OsStr, OsString};

/// The variable ONNX Runtime reads.
pub const VAR: &str = "ORT_DISABLE_TELEMETRY";
/// The variable glibc reads its malloc settings from.
pub const TUNABLES: &str = "GLIBC_TUNABLES";
/// A fixed mmap threshold (glibc's initial 128 KiB: blocks this large are mapped on their own and
/// unmapped when freed) and the free space kept at the heap's top before it is given back.
const MALLOC: &str = "glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=8388608";
/// The setting that, when the user gave it, leaves malloc as the user set it.
const MMAP_THRESHOLD: &str = "glibc.malloc.mmap_threshold";

/// Replaces this process with itself plus the variables it lacks (`missing`); returns (and
/// carries on without them) only when that cannot be done.
pub fn ensure() {
    let tunables = std::env::var_os(TUNABLES);
    let vars = missing(std::env::var_os(VAR).as_deref(), tunables.as_deref(), cfg!(target_env = "gnu"));
    if vars.is_empty() {
        return;
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let Ok(exe) = std::env::current_exe() else { return };
        let args: Vec<OsString> = std::env::args_os().skip(1).collect();
        let err = std::process::Command::new(exe).args(args).envs(vars).exec();
        // exec returns only on failure; the runtime and malloc then keep their defaults.
        let _ = err;
    }
}

/// The variables to set, given the current `ORT_DISABLE_TELEMETRY` and `GLIBC_TUNABLES` (on glibc
/// only): the malloc setting is added to tunables the user set, unless they set it themselves.
fn missing(telemetry: Option<&OsStr>, tunables: Option<&OsStr>, glibc: bool) -> Vec<(&'static str, OsString)> {
    let mut vars = Vec::new();
    if telemetry.is_none() {
        vars.push((VAR, OsString::from("1")));
    }
    match tunables {
        _ if !glibc => {}
        None => vars.push((TUNABLES, OsString::from(MALLOC))),
        Some(t) if t.to_string_lossy().contains(MMAP_THRESHOLD) => {}
        Some(t) => {
            let mut v = t.to_os_string();
            if !v.is_empty() {
                v.push(":");
            }
            v.push(MALLOC);
            vars.push((TUNABLES, v));
        }
    }
    vars
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[(&str, OsString)]) -> Vec<String> {
        v.iter().map(|(k, v)| format!("{k}={}", v.to_string_lossy())).collect()
    }

    #[test]
    fn a_process_started_bare_sets_both_and_one_started_again_sets_nothing() {
        let first = missing(None, None, true);
        assert_eq!(names(&first), [format!("{VAR}=1"), format!("{TUNABLES}={MALLOC}")]);
        let again = missing(Some(OsStr::new("1")), Some(OsStr::new(MALLOC)), true);
        assert!(again.is_empty(), "a second start would loop: {:?}", names(&again));
    }

    #[test]
    fn the_users_tunables_are_kept_and_their_own_threshold_wins() {
        let theirs = missing(Some(OsStr::new("1")), Some(OsStr::new("glibc.malloc.arena_max=2")), true);
        assert_eq!(names(&theirs), [format!("{TUNABLES}=glibc.malloc.arena_max=2:{MALLOC}")]);
        let own = missing(Some(OsStr::new("1")), Some(OsStr::new("glibc.malloc.mmap_threshold=65536")), true);
        assert!(own.is_empty());
    }

    #[test]
    fn without_glibc_only_the_runtime_variable_matters() {
        assert_eq!(names(&missing(None, None, false)), [format!("{VAR}=1")]);
        assert!(missing(Some(OsStr::new("1")), None, false).is_empty());
    }
}
