//! Keeps the large buffers of each embedding in the heap between requests.
//!
//! Every embedding allocates and frees buffers of a few hundred kilobytes (the token arrays, the
//! model's output for up to 256 tokens). glibc serves blocks above its mmap threshold with fresh
//! mappings and unmaps them on free, so each request paid for mapping, zero-filling and unmapping
//! them again: in a profile of `refrain serve` answering semantic `response_cache_get`s, page
//! faults and unmapping were the largest part of the kernel's share. Raising the threshold to 4 MiB
//! (and trimming the heap's free top only past 16 MiB) lets those blocks be reused; the semantic get
//! beyond its embedding went from 0.95-1.29 ms to 0.64-0.89 ms p50 (`refrain-bench results`, 1k
//! entries). At most 16 MiB of freed memory stays with the process.

/// Largest block served from the heap rather than its own mapping.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: i32 = 4 << 20;
/// Free memory at the heap's top kept before it is given back.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_THRESHOLD: i32 = 16 << 20;

/// Sets the thresholds (glibc on Linux; elsewhere the allocator's defaults stay). Call once, before
/// the model loads.
pub fn keep_large_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets two of glibc's allocator parameters; it takes no pointers, and
    // glibc takes its own locks for it.
    #[allow(unsafe_code)]
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
    }
}
