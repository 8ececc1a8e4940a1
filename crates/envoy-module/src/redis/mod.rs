#![forbid(unsafe_code)]
//! The replay guard in Redis, shared by every Envoy of the fleet: a small
//! RESP client over `std::net::TcpStream` on one I/O thread per filter
//! configuration, so a worker thread never waits on the network.
//!
//! A worker hands its claim (the core's `claim_args`, `SET <key> 1 NX PX
//! <ms>`) to the thread with a reply callback and holds the request; the
//! thread sends every claim waiting (pipelined on one connection), reads the
//! replies in order and calls each callback once, from the I/O thread, with
//! what Redis said, read by the core (`replay::redis::claim_answer`: `+OK`
//! a first use, nil a replay),
//! anything else, no answer within [`REDIS_TIMEOUT`] of the claim, or no
//! connection at all `Failed`, whose meaning (`internal_error`) is the
//! core's. A claim is never sent twice: after any failure the connection is
//! dropped (a late reply can never be read as another call's) and the next
//! claims go over a new one.
//!
//! [`REDIS_TIMEOUT`]: toolctx_gateway_config::REDIS_TIMEOUT

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use toolctx_core::ClaimAnswer;

use crate::module::Level;

mod resp;
mod url;

pub(crate) use resp::{claim_answer, command, parse, Reply};
pub use url::Endpoint;

/// Claims waiting for the I/O thread at most; past that a claim fails at
/// once (never blocking the worker).
pub const QUEUE: usize = 4096;
/// Claims sent in one write.
const MAX_BATCH: usize = 256;

/// Where a log line goes, from any thread.
pub type Log = Arc<dyn Fn(Level, &str) + Send + Sync>;

/// Called once with Redis's answer to a claim, on the I/O thread.
pub type ReplyFn = Box<dyn FnOnce(ClaimAnswer) + Send>;

// ------------------------------------------------------------- connection

const LATE: &str = "Redis did not answer in time";

fn left(deadline: Instant) -> Result<Duration, String> {
    deadline
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
        .ok_or_else(|| LATE.to_string())
}

fn io_error(what: &str, e: &std::io::Error) -> String {
    match e.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => LATE.to_string(),
        kind => format!("{what} ({kind:?})"),
    }
}

/// One connection and the bytes read from it that no reply took yet.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    fn open(ep: &Endpoint, deadline: Instant) -> Result<Conn, String> {
        let addrs = (ep.host.as_str(), ep.port)
            .to_socket_addrs()
            .map_err(|e| io_error("cannot resolve the Redis host", &e))?;
        let mut why = "the Redis host has no address".to_string();
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, left(deadline)?) {
                Ok(stream) => {
                    let _ = stream.set_nodelay(true);
                    let mut conn = Conn {
                        stream,
                        buf: Vec::new(),
                    };
                    conn.hello(ep, deadline)?;
                    return Ok(conn);
                }
                Err(e) => why = io_error("cannot connect to Redis", &e),
            }
        }
        Err(why)
    }

    /// AUTH and SELECT, as the URL asks.
    fn hello(&mut self, ep: &Endpoint, deadline: Instant) -> Result<(), String> {
        if let Some(password) = &ep.password {
            let auth = match &ep.user {
                Some(user) => command(&["AUTH", user, password]),
                None => command(&["AUTH", password]),
            };
            self.send(&auth, deadline)?;
            if !self.read(deadline)?.core().is_ok() {
                return Err("Redis refused the user or password of the URL".into());
            }
        }
        if ep.db != 0 {
            self.send(
                &command(&["SELECT".to_string(), ep.db.to_string()]),
                deadline,
            )?;
            if !self.read(deadline)?.core().is_ok() {
                return Err("Redis refused the database of the URL".into());
            }
        }
        Ok(())
    }

    fn send(&mut self, bytes: &[u8], deadline: Instant) -> Result<(), String> {
        self.stream
            .set_write_timeout(Some(left(deadline)?))
            .map_err(|e| io_error("cannot set a write timeout", &e))?;
        self.stream
            .write_all(bytes)
            .map_err(|e| io_error("cannot write to Redis", &e))
    }

    fn read(&mut self, deadline: Instant) -> Result<Reply, String> {
        let mut chunk = [0u8; 4096];
        loop {
            if let Some((reply, used)) = parse(&self.buf)? {
                self.buf.drain(..used.min(self.buf.len()));
                return Ok(reply);
            }
            self.stream
                .set_read_timeout(Some(left(deadline)?))
                .map_err(|e| io_error("cannot set a read timeout", &e))?;
            match self.stream.read(&mut chunk) {
                Ok(0) => return Err("Redis closed the connection".into()),
                Ok(n) => self
                    .buf
                    .extend_from_slice(chunk.get(..n).unwrap_or_default()),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(io_error("cannot read from Redis", &e)),
            }
        }
    }

    /// Whether an idle connection is still usable: Redis may have closed
    /// it (restarted, its idle timeout) while no claim was in flight, and a
    /// claim written into a closed connection would fail for nothing.
    fn usable(&self) -> bool {
        if !self.buf.is_empty() || self.stream.set_nonblocking(true).is_err() {
            return false;
        }
        let mut one = [0u8; 1];
        let open =
            matches!(self.stream.peek(&mut one), Err(e) if e.kind() == ErrorKind::WouldBlock);
        self.stream.set_nonblocking(false).is_ok() && open
    }
}

// ------------------------------------------------------------ I/O thread

/// One claim in the queue. Dropped without an answer (the thread stopped,
/// a panic), it answers `Failed`: every held request is resumed.
struct Job {
    command: Vec<u8>,
    deadline: Instant,
    reply: Option<ReplyFn>,
}

impl Job {
    fn finish(mut self, answer: ClaimAnswer) {
        if let Some(reply) = self.reply.take() {
            reply(answer);
        }
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        if let Some(reply) = self.reply.take() {
            reply(ClaimAnswer::Failed);
        }
    }
}

/// The Redis replay guard of one filter configuration: its I/O thread and
/// the queue to it. Dropping it stops the thread and waits for it (at most
/// the claim in flight, [`REDIS_TIMEOUT`]), so no code of the module runs
/// once Envoy has let the configuration go.
///
/// [`REDIS_TIMEOUT`]: toolctx_gateway_config::REDIS_TIMEOUT
pub struct RedisGuard {
    key_prefix: String,
    timeout: Duration,
    queue: Arc<Queue>,
    thread: Option<JoinHandle<()>>,
}

/// The claims waiting for the I/O thread (a plain mutex and condition
/// variable: smaller in the `.so` than a channel).
#[derive(Default)]
struct Queue {
    state: Mutex<Waiting>,
    ready: Condvar,
}

#[derive(Default)]
struct Waiting {
    jobs: VecDeque<Job>,
    /// The configuration is gone: the thread stops.
    closed: bool,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, Waiting> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next claims (at most [`MAX_BATCH`]), waiting for one; `None`
    /// once closed.
    fn next(&self) -> Option<Vec<Job>> {
        let mut w = self.lock();
        while w.jobs.is_empty() && !w.closed {
            w = self.ready.wait(w).unwrap_or_else(PoisonError::into_inner);
        }
        if w.closed {
            return None;
        }
        let n = w.jobs.len().min(MAX_BATCH);
        Some(w.jobs.drain(..n).collect())
    }

    fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_all();
    }
}

impl std::fmt::Debug for RedisGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisGuard")
            .field("key_prefix", &self.key_prefix)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl RedisGuard {
    /// Starts the I/O thread, which connects at once (and says in the log
    /// whether Redis answered; it is not needed to start).
    pub fn start(
        endpoint: Endpoint,
        key_prefix: String,
        timeout: Duration,
        log: Log,
    ) -> Result<RedisGuard, String> {
        let queue = Arc::new(Queue::default());
        let jobs = queue.clone();
        let thread = std::thread::Builder::new()
            .name("toolctx-redis".into())
            .spawn(move || run(endpoint, timeout, &jobs, log))
            .map_err(|e| format!("cannot start the Redis thread ({:?})", e.kind()))?;
        Ok(RedisGuard {
            key_prefix,
            timeout,
            queue,
            thread: Some(thread),
        })
    }

    pub fn key_prefix(&self) -> &str {
        &self.key_prefix
    }

    /// Queues the command `args`; `reply` is called once, on the I/O
    /// thread, with the answer, within the timeout. `Err` (the queue is
    /// full, the thread gone): nothing was queued and `reply` is never
    /// called.
    pub fn claim<A: AsRef<[u8]>>(&self, args: &[A], reply: ReplyFn) -> Result<(), &'static str> {
        let mut w = self.queue.lock();
        if w.closed {
            return Err("the Redis thread is stopped");
        }
        if w.jobs.len() >= QUEUE {
            return Err("too many claims wait for Redis");
        }
        w.jobs.push_back(Job {
            command: command(args),
            deadline: Instant::now() + self.timeout,
            reply: Some(reply),
        });
        drop(w);
        self.queue.ready.notify_one();
        Ok(())
    }
}

impl Drop for RedisGuard {
    fn drop(&mut self) {
        self.queue.close();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The I/O thread's state.
struct Io {
    endpoint: Endpoint,
    conn: Option<Conn>,
    /// The failure last logged, until Redis answers again (one line per
    /// change, not one per refused call).
    down: Option<String>,
    log: Log,
}

fn run(endpoint: Endpoint, timeout: Duration, jobs: &Queue, log: Log) {
    let mut io = Io {
        endpoint,
        conn: None,
        down: None,
        log,
    };
    match Conn::open(&io.endpoint, Instant::now() + timeout) {
        Ok(conn) => {
            io.conn = Some(conn);
            (io.log)(Level::Info, "replay guard: Redis answers");
        }
        Err(why) => io.failed(why),
    }
    // Ends when the configuration is dropped; claims still queued then
    // answer `Failed` as they are dropped.
    while let Some(batch) = jobs.next() {
        // A panic drops the batch: each job answers `Failed` as it goes.
        if catch_unwind(AssertUnwindSafe(|| io.serve(batch))).is_err() {
            io.conn = None;
        }
    }
}

impl Io {
    fn failed(&mut self, why: String) {
        if self.down.as_ref() != Some(&why) {
            (self.log)(
                Level::Error,
                &format!("replay guard: {why}; guarded calls are refused (internal_error) until Redis answers"),
            );
            self.down = Some(why);
        }
    }

    fn serve(&mut self, batch: Vec<Job>) {
        let now = Instant::now();
        let (live, late): (Vec<Job>, Vec<Job>) = batch.into_iter().partition(|j| j.deadline > now);
        if !late.is_empty() {
            late.into_iter().for_each(|j| j.finish(ClaimAnswer::Failed));
            self.failed(LATE.into());
        }
        let Some(first) = live.iter().map(|j| j.deadline).min() else {
            return;
        };
        let conn = match self.conn.take().filter(Conn::usable) {
            Some(conn) => Ok(conn),
            None => Conn::open(&self.endpoint, first),
        };
        let mut conn = match conn {
            Ok(conn) => conn,
            Err(why) => {
                live.into_iter().for_each(|j| j.finish(ClaimAnswer::Failed));
                return self.failed(why);
            }
        };
        let out: Vec<u8> = live
            .iter()
            .flat_map(|j| j.command.iter().copied())
            .collect();
        if let Err(why) = conn.send(&out, first) {
            live.into_iter().for_each(|j| j.finish(ClaimAnswer::Failed));
            return self.failed(why);
        }
        let mut refused = None;
        let mut jobs = live.into_iter();
        while let Some(job) = jobs.next() {
            match conn.read(job.deadline) {
                Ok(reply) => {
                    if let Reply::Error(e) = &reply {
                        refused = Some(toolctx_gateway_config::printable(e, 80));
                    }
                    job.finish(claim_answer(&reply));
                }
                Err(why) => {
                    // The rest of the replies cannot be told apart from
                    // late ones: fail them all with the connection.
                    job.finish(ClaimAnswer::Failed);
                    jobs.for_each(|j| j.finish(ClaimAnswer::Failed));
                    return self.failed(why);
                }
            }
        }
        self.conn = Some(conn);
        match refused {
            Some(e) => self.failed(format!("Redis refused the claim ({e})")),
            None if self.down.take().is_some() => {
                (self.log)(Level::Info, "replay guard: Redis answers again");
            }
            None => {}
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::sync::mpsc;

    /// A scripted server on 127.0.0.1: answers each command it reads with
    /// the next reply of `script` (`None`: read it and say nothing).
    fn server(script: Vec<Option<&'static [u8]>>) -> (u16, Arc<Mutex<Vec<Vec<u8>>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = seen.clone();
        std::thread::spawn(move || {
            let mut script = script.into_iter();
            // Connections stay open (a silent server keeps them).
            let mut held = Vec::new();
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut buf = Vec::new();
                let mut chunk = [0u8; 1024];
                loop {
                    while let Some(end) = command_end(&buf) {
                        record.lock().unwrap().push(buf.drain(..end).collect());
                        match script.next() {
                            Some(Some(reply)) => stream.write_all(reply).unwrap(),
                            Some(None) => {}
                            None => return,
                        }
                    }
                    match stream.read(&mut chunk) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                    if buf.is_empty() && script.len() == 0 {
                        break;
                    }
                }
                held.push(stream);
            }
        });
        (port, seen)
    }

    /// The end of the first whole command in `buf` (as `command` writes them).
    fn command_end(buf: &[u8]) -> Option<usize> {
        let (reply, used) = parse(buf).ok()??;
        matches!(reply, Reply::Array(_)).then_some(used)
    }

    fn guard(port: u16, url_tail: &str, timeout_ms: u64) -> (RedisGuard, Arc<Mutex<Vec<String>>>) {
        let logs = Arc::new(Mutex::new(Vec::new()));
        let lines = logs.clone();
        let log: Log = Arc::new(move |_, m: &str| lines.lock().unwrap().push(m.to_string()));
        let ep = Endpoint::parse(&format!("redis://{url_tail}127.0.0.1:{port}")).unwrap();
        let g = RedisGuard::start(ep, "p:".into(), Duration::from_millis(timeout_ms), log).unwrap();
        (g, logs)
    }

    fn ask(g: &RedisGuard, key: &str) -> mpsc::Receiver<ClaimAnswer> {
        let (tx, rx) = mpsc::channel();
        g.claim(
            &["SET", key, "1", "NX", "PX", "1000"],
            Box::new(move |a| tx.send(a).unwrap()),
        )
        .unwrap();
        rx
    }

    #[test]
    fn answers_in_order_and_fails_closed_on_errors() {
        let (port, seen) = server(vec![
            Some(b"+OK\r\n"),
            Some(b"+OK\r\n"),
            Some(b"$-1\r\n"),
            Some(b"-OOM command not allowed\r\n"),
        ]);
        let (g, logs) = guard(port, ":pw@", 2000);
        let answers: Vec<ClaimAnswer> = ["a", "a", "b"]
            .iter()
            .map(|k| ask(&g, k))
            .collect::<Vec<_>>()
            .into_iter()
            .map(|rx| rx.recv().unwrap())
            .collect();
        assert_eq!(
            answers,
            [
                ClaimAnswer::FirstUse,
                ClaimAnswer::Used,
                ClaimAnswer::Failed
            ]
        );
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen[0], command(&["AUTH", "pw"]));
        assert_eq!(seen[1], command(&["SET", "a", "1", "NX", "PX", "1000"]));
        drop(g);
        assert!(
            logs.lock()
                .unwrap()
                .iter()
                .any(|l| l.contains("Redis refused the claim (OOM")),
            "{logs:?}"
        );
    }

    #[test]
    fn a_silent_redis_fails_the_claim_and_a_late_reply_is_never_read() {
        // Connects, then never answers the claim; the next connection answers.
        // Judged by the answer and the log, not by how fast it came.
        let (port, seen) = server(vec![None, Some(b"+OK\r\n")]);
        let (g, logs) = guard(port, "", 300);
        let answer = ask(&g, "slow").recv().unwrap();
        assert_eq!(answer, ClaimAnswer::Failed);
        // A new connection for the next claim; it is answered.
        assert_eq!(ask(&g, "next").recv().unwrap(), ClaimAnswer::FirstUse);
        assert_eq!(seen.lock().unwrap().len(), 2);
        drop(g);
        let logs = logs.lock().unwrap();
        assert!(
            logs.iter().any(|l| l.contains(LATE))
                && logs.iter().any(|l| l.contains("answers again")),
            "{logs:?}"
        );
    }

    #[test]
    fn no_redis_fails_and_a_stopped_guard_queues_nothing() {
        let port = {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let (g, logs) = guard(port, "", 500);
        let answer = ask(&g, "k").recv().unwrap();
        assert_eq!(answer, ClaimAnswer::Failed);
        assert!(logs
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("cannot connect to Redis")));
        // A guard whose thread is gone refuses to queue, and never calls back.
        let stopped = g;
        stopped.queue.close();
        let called = Arc::new(Mutex::new(false));
        let c = called.clone();
        assert!(stopped
            .claim(&["PING"], Box::new(move |_| *c.lock().unwrap() = true))
            .is_err());
        assert!(!*called.lock().unwrap());
    }

    #[test]
    fn a_claim_dropped_unanswered_answers_failed() {
        let (tx, rx) = mpsc::channel();
        drop(Job {
            command: Vec::new(),
            deadline: Instant::now(),
            reply: Some(Box::new(move |a| tx.send(a).unwrap())),
        });
        assert_eq!(rx.recv().unwrap(), ClaimAnswer::Failed);
    }
}
