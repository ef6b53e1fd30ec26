//! Opening an input: a file or standard input, gzip- or zstd-compressed or not. Input that is
//! not a regular file (a pipe from tcpdump, a terminal) is read on its own thread, so that the
//! run can notice an interrupt while no data arrives and still finish cleanly.

mod zstd;

use crate::interrupt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::os::fd::AsFd;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::Duration;

/// An opened input.
pub struct Input {
    pub reader: Box<dyn Read>,
    /// A regular file (seekable, finite): output may be buffered in large blocks.
    pub regular: bool,
    /// Its size in bytes, when known (for progress).
    pub size: u64,
    /// The compression it was read through, if any.
    pub compression: Option<&'static str>,
}

impl Input {
    /// Copies everything read into `path` as it is read, so that input that cannot be read
    /// twice (a pipe) can be read again for `-w`.
    pub fn spool_to(self, path: &std::path::Path) -> io::Result<Input> {
        let file = io::BufWriter::new(File::create(path)?);
        Ok(Input {
            reader: Box::new(Tee {
                inner: self.reader,
                copy: file,
            }),
            ..self
        })
    }
}

/// A reader that writes what it reads to a second place.
struct Tee {
    inner: Box<dyn Read>,
    copy: io::BufWriter<File>,
}

impl Read for Tee {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 {
            io::Write::flush(&mut self.copy)?;
        }
        io::Write::write_all(&mut self.copy, buf.get(..n).unwrap_or_default())?;
        Ok(n)
    }
}

impl Drop for Tee {
    fn drop(&mut self) {
        let _ = io::Write::flush(&mut self.copy);
    }
}

/// Chunks handed from the reading thread; with the channel's depth this bounds what is held.
const CHUNK: usize = 64 * 1024;
const DEPTH: usize = 8;
/// How often a reader waiting for data looks for an interrupt.
const POLL: Duration = Duration::from_millis(50);

/// Opens `name` (`-` is standard input) and undoes gzip or zstd compression, told by magic.
/// A zstd frame whose window is over `max_zstd_window` bytes is refused (`--max-zstd-window`).
pub fn open(name: &str, max_zstd_window: u64) -> io::Result<Input> {
    let file = if name == "-" {
        // A duplicate of descriptor 0, as a File: its metadata tell a redirected regular file
        // from a pipe, and it can move to the reading thread.
        File::from(io::stdin().as_fd().try_clone_to_owned()?)
    } else {
        File::open(name)?
    };
    let meta = file.metadata()?;
    let regular = meta.is_file();
    let raw: Box<dyn Read> = if regular {
        Box::new(file)
    } else {
        Box::new(ChannelReader::spawn(file))
    };
    // Small: a capture reader reads in larger pieces, which then bypass this buffer
    // (`capture::pcap`'s `MIN_READ`); it is here to look at the first bytes.
    let mut buffered = BufReader::with_capacity(64 * 1024, raw);
    let head = buffered.fill_buf()?;
    let (reader, compression): (Box<dyn Read>, _) = if head.starts_with(&[0x1f, 0x8b]) {
        (
            Box::new(flate2::bufread::MultiGzDecoder::new(buffered)),
            Some("gzip"),
        )
    } else if head.starts_with(&zstd::MAGIC) {
        let z = zstd::Frames::new(buffered, max_zstd_window)?;
        (Box::new(BufReader::with_capacity(1 << 20, z)), Some("zstd"))
    } else {
        (Box::new(buffered), None)
    };
    Ok(Input {
        reader,
        regular,
        size: if regular { meta.len() } else { 0 },
        compression,
    })
}

/// Reads what a thread reads from a pipe, giving up with an end of input when interrupted.
struct ChannelReader {
    rx: Receiver<io::Result<Vec<u8>>>,
    cur: Vec<u8>,
    pos: usize,
    done: bool,
}

impl ChannelReader {
    fn spawn(mut src: File) -> ChannelReader {
        let (tx, rx) = mpsc::sync_channel(DEPTH);
        thread::spawn(move || loop {
            let mut buf = vec![0u8; CHUNK];
            match src.read(&mut buf) {
                Ok(n) => {
                    buf.truncate(n);
                    if tx.send(Ok(buf)).is_err() || n == 0 {
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        });
        ChannelReader {
            rx,
            cur: Vec::new(),
            pos: 0,
            done: false,
        }
    }
}

impl Read for ChannelReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        // An interrupt ends the input even while data keeps coming.
        if interrupt::received().is_some() {
            self.done = true;
            return Ok(0);
        }
        loop {
            if self.pos < self.cur.len() {
                let rest = self.cur.get(self.pos..).unwrap_or_default();
                let n = rest.len().min(out.len());
                if let (Some(dst), Some(src)) = (out.get_mut(..n), rest.get(..n)) {
                    dst.copy_from_slice(src);
                }
                self.pos += n;
                return Ok(n);
            }
            if self.done {
                return Ok(0);
            }
            match self.rx.recv_timeout(POLL) {
                Ok(Ok(chunk)) if chunk.is_empty() => self.done = true,
                Ok(Ok(chunk)) => {
                    self.cur = chunk;
                    self.pos = 0;
                }
                Ok(Err(e)) => return Err(e),
                Err(RecvTimeoutError::Timeout) => {
                    if interrupt::received().is_some() {
                        self.done = true;
                    }
                }
                Err(RecvTimeoutError::Disconnected) => self.done = true,
            }
        }
    }
}
