//! N requests in flight, results in input order: std threads, no async runtime.

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::sync::Mutex;

/// One input of [`run_ordered`]: work for a thread, or a result known at once (a line that
/// is not a request, say), which keeps its place in the order.
#[derive(Debug)]
pub enum Input<T, R> {
    /// Run the work function on it.
    Work(T),
    /// Emit this result in its place.
    Done(R),
}

/// Runs `work` on every input from `next` with up to `concurrency` of them in flight, and
/// hands each result to `emit` in input order, as soon as every earlier one is out.
///
/// `next` is called on this thread (so it may read a non-`Send` reader) whenever a slot is
/// free; `Ok(None)` ends the inputs. `emit` returning `Ok(false)` stops the run: no new
/// input is read, the ones in flight finish and are dropped. An error from `next` or
/// `emit` stops the run the same way and is returned.
///
/// # Errors
/// The first error of `next` or `emit`.
pub fn run_ordered<T, R, E>(
    concurrency: usize,
    mut next: impl FnMut() -> Result<Option<Input<T, R>>, E>,
    work: impl Fn(T) -> R + Sync,
    mut emit: impl FnMut(R) -> Result<bool, E>,
) -> Result<(), E>
where
    T: Send,
    R: Send,
{
    let concurrency = concurrency.max(1);
    let (job_tx, job_rx) = mpsc::channel::<(usize, T)>();
    let job_rx = Mutex::new(job_rx);
    let (res_tx, res_rx) = mpsc::channel::<(usize, R)>();
    std::thread::scope(|s| {
        let work = &work;
        let job_rx = &job_rx;
        for _ in 0..concurrency {
            let res_tx = res_tx.clone();
            s.spawn(move || loop {
                // The lock is held only to take a job, never while working.
                let job = match job_rx.lock() {
                    Ok(rx) => rx.recv(),
                    Err(_) => return,
                };
                let Ok((i, t)) = job else { return };
                if res_tx.send((i, work(t))).is_err() {
                    return;
                }
            });
        }
        drop(res_tx);
        let mut pending: BTreeMap<usize, R> = BTreeMap::new();
        let mut next_in = 0usize; // index of the next input read
        let mut next_out = 0usize; // index of the next result emitted
        let mut in_flight = 0usize;
        let mut inputs_done = false;
        let outcome = (|| -> Result<(), E> {
            loop {
                // Fill the free slots (results waiting to be emitted count as taken,
                // so a slow early request bounds the memory held for later ones).
                while !inputs_done && in_flight + pending.len() < concurrency {
                    match next()? {
                        None => inputs_done = true,
                        Some(Input::Done(r)) => {
                            pending.insert(next_in, r);
                            next_in += 1;
                        }
                        Some(Input::Work(t)) => {
                            if job_tx.send((next_in, t)).is_err() {
                                inputs_done = true;
                                break;
                            }
                            next_in += 1;
                            in_flight += 1;
                        }
                    }
                }
                // Emit what is in order.
                while let Some(r) = pending.remove(&next_out) {
                    next_out += 1;
                    if !emit(r)? {
                        return Ok(());
                    }
                }
                if inputs_done && in_flight == 0 && pending.is_empty() {
                    return Ok(());
                }
                if in_flight == 0 {
                    continue;
                }
                match res_rx.recv() {
                    Ok((i, r)) => {
                        in_flight -= 1;
                        pending.insert(i, r);
                    }
                    // Every worker is gone (a panic in `work`): nothing more will come.
                    Err(_) => return Ok(()),
                }
            }
        })();
        drop(job_tx);
        outcome
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn results_come_in_input_order_with_n_in_flight() {
        for n in [1, 2, 4, 7] {
            let inputs: Vec<usize> = (0..40).collect();
            let mut it = inputs.into_iter();
            let active = AtomicUsize::new(0);
            let peak = AtomicUsize::new(0);
            let mut out = Vec::new();
            run_ordered::<usize, usize, ()>(
                n,
                || {
                    Ok(it.next().map(|i| {
                        if i % 10 == 3 {
                            Input::Done(i)
                        } else {
                            Input::Work(i)
                        }
                    }))
                },
                |i| {
                    let a = active.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(a, Ordering::SeqCst);
                    // Later inputs finish first.
                    std::thread::sleep(Duration::from_millis(((40 - i) % 5) as u64));
                    active.fetch_sub(1, Ordering::SeqCst);
                    i
                },
                |r| {
                    out.push(r);
                    Ok(true)
                },
            )
            .unwrap();
            assert_eq!(out, (0..40).collect::<Vec<_>>(), "concurrency {n}");
            assert!(peak.load(Ordering::SeqCst) <= n, "concurrency {n}");
        }
    }

    #[test]
    fn emit_false_stops_reading_and_errors_are_returned() {
        let mut read = 0;
        let mut out = Vec::new();
        run_ordered::<usize, usize, ()>(
            2,
            || {
                read += 1;
                Ok((read <= 100).then_some(Input::Work(read)))
            },
            |i| i,
            |r| {
                out.push(r);
                Ok(r < 5)
            },
        )
        .unwrap();
        assert_eq!(out, vec![1, 2, 3, 4, 5]);
        assert!(read < 10, "read {read} inputs after the stop");
        let mut k = 0;
        let e = run_ordered::<usize, usize, &str>(
            3,
            || {
                k += 1;
                if k == 4 {
                    Err("unreadable")
                } else {
                    Ok(Some(Input::Work(k)))
                }
            },
            |i| i,
            |_| Ok(true),
        );
        assert_eq!(e, Err("unreadable"));
    }
}
