//! Where a policy call runs on the server's runtime: in place, on the
//! worker that took the request, or with that worker's other tasks handed
//! to another thread first (`block_in_place`).
//!
//! Policy calls are synchronous. What keeps them off a runtime's worker is
//! not their compute (bounded by the deadline, like any request's work)
//! but WASI: wasmtime-wasi's synchronous host functions that can wait
//! (`poll`, a stream's blocking write, a stream's drop) block on the ambient
//! tokio runtime, which a worker must not do (tokio panics). Handing every
//! call off costs two thread wake-ups a call, about a third of a warm
//! call's CPU. So the sandbox links its own versions of each such function
//! in the interfaces a policy's standard library imports (`wasi:io/poll`,
//! `wasi:io/streams`): they run in place what ends at once (a print to the
//! policy's in-memory stdout, `ready` of what is ready) and hand the worker
//! off only when they must wait (a sleep), which a policy that does not
//! sleep never does. A policy that
//! imports anything else that can wait (sockets, HTTP, an interface this
//! host does not know) runs each call handed off, as before
//! ([`runs_in_place`]).

use wasmtime::StoreContextMut;
use wasmtime::component::types::ComponentItem;
use wasmtime::component::{Component, Linker, Resource, ResourceType};
use wasmtime_wasi::WasiView;
use wasmtime_wasi::p2::bindings::io::streams::{HostInputStream, HostOutputStream};
use wasmtime_wasi::p2::bindings::sync::io::streams;
use wasmtime_wasi::p2::{DynInputStream, DynOutputStream, StreamResult};

/// The WASI interface whose host calls can wait (`engine::bound_waits`).
pub const WASI_POLL: &str = "wasi:io/poll@0.2.12";
/// The WASI interface of streams, whose blocking calls block on the runtime.
pub(crate) const WASI_STREAMS: &str = "wasi:io/streams@0.2.12";

/// How long work may run in place on a worker before its policy's calls
/// are handed off ([`crate::Policy::run`]): a warm call takes well under a
/// millisecond.
pub const LONG_IN_PLACE: std::time::Duration = std::time::Duration::from_millis(5);

/// Runs `work`, which may block the thread, from wherever it is called: on
/// a worker of a multi-threaded tokio runtime, with the worker's other
/// tasks handed to another thread for its duration (a no-op when they were
/// already); anywhere else (a plain thread, the blocking pool, already
/// handed off), simply.
pub fn off_the_runtime<T>(work: impl FnOnce() -> T) -> T {
    if HANDING_OFF.get() {
        return work();
    }
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            /// Clears [`HANDING_OFF`] however the work ends.
            struct Done;
            impl Drop for Done {
                fn drop(&mut self) {
                    HANDING_OFF.set(false);
                }
            }
            let started = std::time::Instant::now();
            HANDING_OFF.set(true);
            let done = {
                let _done = Done;
                tokio::task::block_in_place(work)
            };
            HANDED_OFF.set(HANDED_OFF.get() + started.elapsed());
            done
        }
        _ => work(),
    }
}

thread_local! {
    /// How long this thread has run work handed off ([`off_the_runtime`]):
    /// time in place that held no worker.
    static HANDED_OFF: std::cell::Cell<std::time::Duration> = const { std::cell::Cell::new(std::time::Duration::ZERO) };
    /// Whether this thread runs work handed off now (work handed off
    /// within it is simply run, and not counted twice).
    static HANDING_OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Whether this thread runs a request's work in place ([`timed`]).
    static IN_PLACE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// `work`, a WASI host call that may wait, run to its end: in place, on
/// the worker, when it ends at once (a policy's streams are in memory, so
/// a write, a flush or a drop does; so does `ready` of what is ready);
/// handed off only when it must wait ([`off_the_runtime`]). Off a worker
/// (handed off already, or no runtime), simply run as wasmtime-wasi's
/// synchronous bindings run it.
pub(crate) fn now_or_handed_off<F: std::future::Future>(work: F) -> F::Output {
    let mut work = std::pin::pin!(work);
    // (in place needs a runtime to poll on: a policy's call runs in place
    // without one too, in `policy test` or a benchmark, where a sleep's
    // timer must come from wasmtime-wasi's own runtime)
    if in_place_now()
        && tokio::runtime::Handle::try_current().is_ok()
        && let std::task::Poll::Ready(done) =
            work.as_mut().poll(&mut std::task::Context::from_waker(std::task::Waker::noop()))
    {
        return done;
    }
    off_the_runtime(|| wasmtime_wasi::runtime::in_tokio(work))
}

/// Whether this thread runs a request's work in place now, on the worker
/// that took it ([`crate::Policy::run`]), not handed off.
pub(crate) fn in_place_now() -> bool {
    IN_PLACE.get() && !HANDING_OFF.get()
}

/// Runs `work` in place, and says for how long it held the worker: its
/// time, less what it ran handed off (a policy's wait for a lookup's
/// answer, a sleep).
pub(crate) fn timed<T>(work: impl FnOnce() -> T) -> (T, std::time::Duration) {
    /// Puts [`IN_PLACE`] back however the work ends.
    struct Was(bool);
    impl Drop for Was {
        fn drop(&mut self) {
            IN_PLACE.set(self.0);
        }
    }
    let started = std::time::Instant::now();
    let before = HANDED_OFF.get();
    let _was = Was(IN_PLACE.replace(true));
    let done = work();
    let handed_off = HANDED_OFF.get().saturating_sub(before);
    (done, started.elapsed().saturating_sub(handed_off))
}

/// The WASI interfaces whose every function either never waits or waits
/// only through this module's versions of it (or `engine::bound_waits`'):
/// a policy that imports only these, and Signpost's own `host`, runs in
/// place. `wasi:filesystem` is among them because no policy holds a
/// descriptor (nothing is preopened), and every filesystem function that
/// waits takes one.
const WAIT_FREE: [&str; 13] = [
    "wasi:cli/environment",
    "wasi:cli/exit",
    "wasi:cli/stdin",
    "wasi:cli/stdout",
    "wasi:cli/stderr",
    "wasi:clocks/",
    "wasi:random/",
    "wasi:io/error",
    "wasi:io/poll",
    "wasi:io/streams",
    "wasi:cli/terminal-",
    "wasi:filesystem/",
    "signpost:policy/",
];

/// Whether calls of `component` may run in place on a runtime's worker:
/// every import is an interface of [`WAIT_FREE`] (at any version).
pub(crate) fn runs_in_place(component: &Component, engine: &wasmtime::Engine) -> bool {
    component.component_type().imports(engine).all(|(name, import)| {
        matches!(import.ty, ComponentItem::ComponentInstance(_))
            && WAIT_FREE.iter().any(|free| match free.strip_suffix(['/', '-']) {
                // A family of interfaces (`wasi:clocks/…`, `wasi:cli/terminal-…`).
                Some(_) => name.starts_with(free),
                None => name.split('@').next() == Some(free),
            })
    })
}

/// Replaces the functions of `wasi:io/streams` that wait (the blocking
/// reads, writes, flushes and splices, and the streams' drops) with ones
/// that hand the worker off before they wait ([`now_or_handed_off`]). A
/// policy's streams are all in memory (stdin closed, stdout and stderr
/// captured), so none of them waits for long; they still block on the
/// runtime, which a worker cannot do.
pub(crate) fn hand_off_waits<S: WasiView + 'static>(linker: &mut Linker<S>) -> anyhow::Result<()> {
    type Out = Resource<DynOutputStream>;
    type In = Resource<DynInputStream>;

    /// A stream function's result as the guest gets it: its stream error
    /// in WIT's terms, or a trap.
    fn lowered<S: WasiView, T>(
        store: &mut StoreContextMut<'_, S>,
        result: StreamResult<T>,
    ) -> wasmtime::Result<(Result<T, streams::StreamError>,)> {
        match result {
            Ok(value) => Ok((Ok(value),)),
            Err(e) => Ok((Err(streams::Host::convert_stream_error(store.data_mut().ctx().table, e)?),)),
        }
    }

    linker.allow_shadowing(true);
    let mut io = linker.instance(WASI_STREAMS)?;
    io.func_wrap(
        "[method]output-stream.blocking-write-and-flush",
        |mut store: StoreContextMut<'_, S>, (this, bytes): (Out, Vec<u8>)| {
            let table = store.data_mut().ctx().table;
            let written = now_or_handed_off(HostOutputStream::blocking_write_and_flush(table, this, bytes));
            lowered(&mut store, written)
        },
    )?;
    io.func_wrap(
        "[method]output-stream.blocking-write-zeroes-and-flush",
        |mut store: StoreContextMut<'_, S>, (this, len): (Out, u64)| {
            let table = store.data_mut().ctx().table;
            let written = now_or_handed_off(HostOutputStream::blocking_write_zeroes_and_flush(table, this, len));
            lowered(&mut store, written)
        },
    )?;
    io.func_wrap("[method]output-stream.blocking-flush", |mut store: StoreContextMut<'_, S>, (this,): (Out,)| {
        let table = store.data_mut().ctx().table;
        let flushed = now_or_handed_off(HostOutputStream::blocking_flush(table, this));
        lowered(&mut store, flushed)
    })?;
    io.func_wrap(
        "[method]output-stream.blocking-splice",
        |mut store: StoreContextMut<'_, S>, (this, from, len): (Out, In, u64)| {
            let table = store.data_mut().ctx().table;
            let spliced = now_or_handed_off(HostOutputStream::blocking_splice(table, this, from, len));
            lowered(&mut store, spliced)
        },
    )?;
    io.func_wrap("[method]input-stream.blocking-read", |mut store: StoreContextMut<'_, S>, (this, len): (In, u64)| {
        let table = store.data_mut().ctx().table;
        let read = now_or_handed_off(HostInputStream::blocking_read(table, this, len));
        lowered(&mut store, read)
    })?;
    io.func_wrap("[method]input-stream.blocking-skip", |mut store: StoreContextMut<'_, S>, (this, len): (In, u64)| {
        let table = store.data_mut().ctx().table;
        let skipped = now_or_handed_off(HostInputStream::blocking_skip(table, this, len));
        lowered(&mut store, skipped)
    })?;
    io.resource("output-stream", ResourceType::host::<DynOutputStream>(), |mut store: StoreContextMut<'_, S>, rep| {
        let table = store.data_mut().ctx().table;
        now_or_handed_off(HostOutputStream::drop(table, Resource::new_own(rep)))
    })?;
    io.resource("input-stream", ResourceType::host::<DynInputStream>(), |mut store: StoreContextMut<'_, S>, rep| {
        let table = store.data_mut().ctx().table;
        now_or_handed_off(HostInputStream::drop(table, Resource::new_own(rep)))
    })?;
    linker.allow_shadowing(false);
    Ok(())
}
