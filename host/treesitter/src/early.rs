//! Reading a part's files, and giving the definitions of those read so
//! far while the rest is read: a large part answers for its first files
//! within a second, and for more of them every second or so after, not
//! only once every file is read.
//!
//! Files are read on as many threads as the machine has cores, each
//! taking the next file in path order, so that the files read form a
//! growing run from the first. The definitions given are always those of
//! such a run (a part's first files, in path order): where no definition
//! of theirs can be spelled otherwise once the rest is read
//! ([`resolve::spelled_alone`]), their symbols are the whole part's. Giving
//! them costs a resolve of their definitions, an index written and (by the
//! caller) read into a graph, on this thread while the readers go on: the
//! next is given no sooner than a second later, nor than three times what
//! the last one took, so that a part of a hundred thousand files spends no
//! more than a quarter of its reading on them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use super::*;

/// When the definitions of the first files read are given.
#[derive(Debug, Clone, Copy)]
pub enum Schedule<'a> {
    /// Once each of these many first files are read (tests).
    At(&'a [usize]),
    /// Paced by time (the module doc): the first after [`FIRST`] of
    /// reading, each next once [`EVERY`] has passed since the last and
    /// three times what the last took; past seven eighths of the files
    /// only once their run has not grown for [`EVERY`] (a slow file: the
    /// whole part's come soon otherwise).
    Paced,
}

/// How long a large part is read before its first files' definitions are
/// given.
pub const FIRST: Duration = Duration::from_millis(500);

/// The least time between two givings of a part's first files.
pub const EVERY: Duration = Duration::from_secs(1);

/// How much longer than the last giving took the next one waits, at least.
const COST_TIMES: u32 = 3;

/// How often the schedule is asked while no file comes (a slow one).
const TICK: Duration = Duration::from_millis(100);

/// What the schedule has seen so far.
struct Clock {
    started: Instant,
    /// Files given so far (the first, in path order).
    given: usize,
    /// When the last were given, and what giving them took.
    last: Option<(Instant, Duration)>,
    /// When the run of files read last grew.
    grew: Instant,
}

impl Schedule<'_> {
    /// With the first `read` of `total` files read: how many of the first
    /// to give now, if any.
    fn due(&self, read: usize, total: usize, clock: &Clock) -> Option<usize> {
        match self {
            Schedule::At(firsts) => firsts.iter().copied().find(|&k| k > clock.given && k < total && k <= read),
            Schedule::Paced => {
                let (since, wait) = match clock.last {
                    None => (clock.started.elapsed(), FIRST),
                    Some((at, cost)) => (at.elapsed(), EVERY.max(cost * COST_TIMES)),
                };
                let more = read > clock.given + (total / 64).max(1);
                let ending = read * 8 >= total * 7 && clock.grew.elapsed() < EVERY;
                (since >= wait && more && !ending).then_some(read)
            }
        }
    }
}

/// What a thread reading files needs, apart from the workspace (which the
/// thread giving definitions changes meanwhile).
struct Readers {
    root: PathBuf,
    lang: &'static Lang,
    opts: Options,
    modules: Vec<(PathBuf, String)>,
    /// Where the bodies read go: the workspace's shelf.
    shelf: Option<Arc<crate::extract::Shelf>>,
}

impl Readers {
    fn of(ws: &Workspace) -> Readers {
        Readers {
            root: ws.root.clone(),
            lang: ws.lang,
            opts: ws.opts.clone(),
            modules: ws.modules.clone(),
            shelf: ws.shelf.clone(),
        }
    }

    /// `source` with its packed body on the shelf, when there is one: a
    /// file read is shelved at once, so that a large part's bodies are not
    /// all in memory until the part is quiet.
    fn shelved(&self, mut source: Source) -> Source {
        if let Some(shelf) = &self.shelf {
            source.body = source.body.shelved(shelf);
        }
        source
    }

    /// Reads `files` in parallel, each thread with its own parser, taking
    /// the next file in the order given; `got` is called on this thread
    /// with each file's place in `files` and its reading as they come,
    /// and, given a `tick`, with none each time it passes without one. A
    /// file whose reader stopped (a panic) is not given ([`unread`]).
    fn each(&self, files: &[PathBuf], tick: Option<Duration>, mut got: impl FnMut(Option<(usize, Stamped)>)) {
        // No reader (nor its language's query) for no files.
        if files.is_empty() {
            return;
        }
        let threads = if self.opts.threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            self.opts.threads
        }
        .clamp(1, 64)
        .min(files.len());
        let next = AtomicUsize::new(0);
        let (sent, came) = mpsc::channel::<(usize, Stamped)>();
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    let (sent, next) = (sent.clone(), &next);
                    scope.spawn(move || {
                        let mut reader = Reader::new(self.lang, self.opts.parse_timeout).map_err(|e| e.to_string());
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(path) = files.get(i) else { break };
                            let read = match &mut reader {
                                Ok(reader) => {
                                    let (read, stamp) =
                                        read_one(reader, &self.root, self.lang, path, &self.modules, &self.opts);
                                    (read.map(|s| Arc::new(self.shelved(s))), stamp)
                                }
                                Err(e) => (Err(e.clone()), None),
                            };
                            if sent.send((i, read)).is_err() {
                                break;
                            }
                        }
                    })
                })
                .collect();
            drop(sent);
            loop {
                let next = match tick {
                    Some(tick) => came.recv_timeout(tick),
                    None => came.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
                };
                match next {
                    Ok(read) => got(Some(read)),
                    Err(mpsc::RecvTimeoutError::Timeout) => got(None),
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
            }
            // A reader that panicked is told by the files it did not give.
            for h in handles {
                let _ = h.join();
            }
        });
    }
}

impl Workspace {
    /// Reads `files` in parallel, each thread its own parser; results in
    /// the order given.
    pub(crate) fn read_all(&self, files: &[PathBuf]) -> Vec<Stamped> {
        let mut all: Vec<Option<Stamped>> = (0..files.len()).map(|_| None).collect();
        Readers::of(self).each(files, None, |read| {
            if let Some((i, read)) = read {
                all[i] = Some(read);
            }
        });
        all.into_iter().map(|r| r.unwrap_or_else(unread)).collect()
    }

    /// Reads `files` (sorted, every one of the part) into the workspace,
    /// giving `early` the definitions of the first files read as
    /// `schedule` says, where no later file can spell them otherwise
    /// (module doc); each [`Indexed::report`] says how many files it holds
    /// and how many are still to read. `started` is when the part's
    /// indexing started (the reports' elapsed time).
    pub(crate) fn read_giving(
        &mut self,
        files: &[PathBuf],
        schedule: Schedule<'_>,
        started: Instant,
        encoded: bool,
        early: &mut impl FnMut(Indexed),
    ) {
        let total = files.len();
        let mut slots: Vec<Option<Stamped>> = (0..total).map(|_| None).collect();
        let (mut read, mut kept, mut alone) = (0, 0, true);
        let mut clock = Clock { started: Instant::now(), given: 0, last: None, grew: Instant::now() };
        Readers::of(self).each(files, Some(TICK), |came| {
            if let Some((i, stamped)) = came {
                slots[i] = Some(stamped);
            }
            let before = read;
            while read < total && slots[read].is_some() {
                read += 1;
            }
            if read > before {
                clock.grew = Instant::now();
            }
            // Once one file's definitions are spelled by what later files
            // hold, so are they in every longer run.
            while let Some(upto) = schedule.due(read, total, &clock).filter(|_| alone) {
                let taking = Instant::now();
                let first = slots[kept..upto].iter_mut().filter_map(Option::take);
                self.keep(files[kept..upto].iter().cloned().zip(first));
                kept = upto;
                let (report, sources) = self.gather();
                let project = resolve::definitions_only(sources);
                alone = resolve::spelled_alone(&project);
                if alone {
                    let report = Report { elapsed: started.elapsed(), pending: total - upto, ..report };
                    let indexed = self.handed(&project, report, encoded);
                    drop(project);
                    early(indexed);
                } else {
                    tracing::debug!(language = self.lang.name, "a part's first files' definitions wait for the rest");
                }
                clock.given = upto;
                clock.last = Some((Instant::now(), taking.elapsed()));
            }
        });
        let rest = slots[kept..].iter_mut().map(|s| s.take().unwrap_or_else(unread));
        self.keep(files[kept..].iter().cloned().zip(rest));
    }
}

/// The reading of a file whose reader stopped before it (a panic).
fn unread() -> Stamped {
    (Err("a reader thread panicked".into()), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(given: usize, last: Option<(Duration, Duration)>, reading: Duration) -> Clock {
        let now = Instant::now();
        let ago = |d: Duration| now.checked_sub(d).unwrap_or(now);
        Clock { started: ago(reading), given, last: last.map(|(at, cost)| (ago(at), cost)), grew: now }
    }

    #[test]
    fn paced_givings_wait_for_time_for_their_cost_and_for_more_files() {
        let s = Schedule::Paced;
        let secs = Duration::from_secs_f64;
        // Not before FIRST of reading; then the run read so far.
        assert_eq!(s.due(100, 10_000, &clock(0, None, secs(0.1))), None);
        assert_eq!(s.due(700, 10_000, &clock(0, None, secs(0.6))), Some(700));
        // The next: a second after the last, and three times its cost.
        assert_eq!(s.due(1500, 10_000, &clock(700, Some((secs(0.5), secs(0.1))), secs(1.1))), None);
        assert_eq!(s.due(1500, 10_000, &clock(700, Some((secs(1.1), secs(0.1))), secs(1.7))), Some(1500));
        assert_eq!(s.due(5000, 10_000, &clock(1500, Some((secs(1.5), secs(0.6))), secs(4.0))), None);
        assert_eq!(s.due(5000, 10_000, &clock(1500, Some((secs(1.9), secs(0.6))), secs(4.4))), Some(5000));
        // Not without more files read (a slow file holds the run back)...
        assert_eq!(s.due(1550, 10_000, &clock(1500, Some((secs(5.0), secs(0.1))), secs(6.0))), None);
        // ...nor past seven eighths while files come (the whole part's
        // come soon), but once they stop coming (a slow file).
        let mut ending = clock(5000, Some((secs(5.0), secs(0.1))), secs(9.0));
        assert_eq!(s.due(8800, 10_000, &ending), None);
        ending.grew = ending.grew.checked_sub(secs(1.5)).unwrap_or(ending.grew);
        assert_eq!(s.due(8800, 10_000, &ending), Some(8800));
    }

    #[test]
    fn givings_at_counts_come_once_each_when_their_files_are_read() {
        let s = Schedule::At(&[10, 30, 100]);
        let at = |given| clock(given, None, Duration::ZERO);
        assert_eq!(s.due(9, 100, &at(0)), None);
        assert_eq!(s.due(35, 100, &at(0)), Some(10));
        assert_eq!(s.due(35, 100, &at(10)), Some(30));
        assert_eq!(s.due(99, 100, &at(30)), None);
        // (every file: the whole part's, given apart)
        assert_eq!(s.due(100, 100, &at(30)), None);
    }
}
