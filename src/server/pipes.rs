//! The protocol's stdin and stdout on the runtime's own event loop.
//!
//! tokio's `stdin()` and `fs::File` hand every read and every write to a blocking-pool thread and
//! wake the protocol task when it is done: two thread hops per message each way, most of the CPU
//! a cheap request costs. Agents start servers with pipes (or, from Node, socket pairs), which
//! can be read and written without blocking, so those are registered with the runtime instead. A
//! terminal or a file keeps tokio's blocking adapters.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use tokio::io::{AsyncRead, AsyncWrite};

/// The protocol's input.
pub type Reader = Box<dyn AsyncRead + Unpin + Send>;
/// The protocol's output.
pub type Writer = Box<dyn AsyncWrite + Unpin + Send>;

/// This process's stdin for the protocol. Needs a runtime context.
pub fn stdin() -> Reader {
    match io::stdin().as_fd().try_clone_to_owned().and_then(reader) {
        Ok(Some(r)) => r,
        _ => Box::new(tokio::io::stdin()),
    }
}

/// The protocol's stdout (see `stdout::take_protocol_stdout`). Needs a runtime context.
pub fn stdout(file: tokio::fs::File) -> Writer {
    match file.try_into_std() {
        Ok(std) => match std.as_fd().try_clone_to_owned().and_then(writer) {
            Ok(Some(w)) => w,
            _ => Box::new(tokio::fs::File::from_std(std)),
        },
        Err(file) => Box::new(file),
    }
}

/// What kind of file a descriptor is, for the choice of adapter.
enum Kind {
    Pipe,
    Socket,
    Other,
}

fn kind(fd: &OwnedFd) -> io::Result<Kind> {
    let t = File::from(fd.try_clone()?).metadata()?.file_type();
    Ok(if t.is_fifo() {
        Kind::Pipe
    } else if t.is_socket() {
        Kind::Socket
    } else {
        Kind::Other
    })
}

/// `fd` read on the event loop, when it is a pipe or a socket.
fn reader(fd: OwnedFd) -> io::Result<Option<Reader>> {
    Ok(match kind(&fd)? {
        Kind::Pipe => Some(Box::new(tokio::net::unix::pipe::Receiver::from_owned_fd(fd)?)),
        Kind::Socket => Some(Box::new(socket(fd)?)),
        Kind::Other => None,
    })
}

/// `fd` written on the event loop, when it is a pipe or a socket.
fn writer(fd: OwnedFd) -> io::Result<Option<Writer>> {
    Ok(match kind(&fd)? {
        Kind::Pipe => Some(Box::new(tokio::net::unix::pipe::Sender::from_owned_fd(fd)?)),
        Kind::Socket => Some(Box::new(socket(fd)?)),
        Kind::Other => None,
    })
}

fn socket(fd: OwnedFd) -> io::Result<tokio::net::UnixStream> {
    let s = std::os::unix::net::UnixStream::from(fd);
    s.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    #[tokio::test]
    async fn a_pipe_is_read_and_written_on_the_event_loop() {
        let (rx, tx) = std::io::pipe().unwrap();
        let mut w = writer(OwnedFd::from(tx)).unwrap().expect("a pipe gets the event-loop writer");
        let r = reader(OwnedFd::from(rx)).unwrap().expect("a pipe gets the event-loop reader");
        w.write_all(b"{\"jsonrpc\":\"2.0\"}\n").await.unwrap();
        w.flush().await.unwrap();
        let line = BufReader::new(r).lines().next_line().await.unwrap();
        assert_eq!(line.as_deref(), Some("{\"jsonrpc\":\"2.0\"}"));
    }

    #[tokio::test]
    async fn a_socket_pair_is_read_and_written_on_the_event_loop() {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut w = writer(OwnedFd::from(a)).unwrap().expect("a socket gets the event-loop writer");
        let r = reader(OwnedFd::from(b)).unwrap().expect("a socket gets the event-loop reader");
        w.write_all(b"one\ntwo\n").await.unwrap();
        let mut lines = BufReader::new(r).lines();
        assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("one"));
        assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("two"));
    }

    #[tokio::test]
    async fn a_regular_file_keeps_the_blocking_adapter() {
        let f = tempfile::tempfile().unwrap();
        assert!(reader(OwnedFd::from(f)).unwrap().is_none());
    }
}
