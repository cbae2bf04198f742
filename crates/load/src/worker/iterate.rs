//! A scenario file's iteration on one lane ([`Local::iterate`]): each request, or hop of the
//! redirects it follows, sent, recorded under its name and judged.

use std::time::Instant;

use stackbench_hurl::Entry;
use stackbench_record::ErrorKind;

use super::Local;
use crate::flow::{Closing, FileSource, IterState, Next, Verdict};
use crate::recorder::{Outcome, Recorder, Step};
use crate::transport::Lane;

impl Local {
    /// A scenario file's state for user (or runner) `stream` of this worker; `None` for the
    /// other sources.
    pub(super) fn iter_state(&self, stream: usize) -> Option<IterState> {
        let src = self.cx.spec.requests.file()?;
        let global = (stream * self.cx.spec.threads + self.cx.index) as u64;
        let spec = &self.cx.spec;
        let closing = if spec.per_iteration() { Closing::Last } else { spec.keepalive().into() };
        Some(IterState::new(src, &spec.target, closing, spec.io, global))
    }

    /// Runs one iteration of a scenario file on `lane`: one flow's requests in order, each
    /// recorded under its name. The first request's latency counts from `intended` (the
    /// due time in the open model), each later one from its own send, which follows the
    /// answer before it at once; the iteration's from `intended` to its last answer. A
    /// request without an answer, or one that could not be written (a variable without a
    /// value: counted `check`, with why), ends it. Returns whether an answer came.
    pub(super) async fn iterate(
        &self,
        lane: &mut Lane,
        st: &mut IterState,
        intended: Instant,
        sent: Instant,
    ) -> bool {
        let spec = &self.cx.spec;
        let Some(src) = spec.requests.file() else { return false };
        let n = self.iterations.get();
        self.iterations.set(n + 1);
        let flow = st.begin(src, n * spec.threads as u64 + self.cx.index as u64);
        self.in_flight.set(self.in_flight.get() + 1);
        let (mut due, mut at) = (intended, sent);
        let mut result = Ok(());
        // When the last exchange ended: the iteration's end.
        let mut ended = None;
        // An iteration of one request is recorded with it, and lasts as long as it (one that
        // follows redirects may send more).
        let single = src.scenario.flows[flow].hurl.entries.len() == 1 && !src.follows_redirects();
        let mut recorded = false;
        let mut answered = false;
        'entries: for (i, (entry, &name)) in
            src.scenario.flows[flow].hurl.entries.iter().zip(&src.slots[flow]).enumerate()
        {
            if i > 0 {
                // Sent at once after the answer before it (and its recording).
                at = Instant::now();
                due = at;
            }
            // Each redirect followed is a request of its own, under its own name. Each is sent,
            // recorded and judged here, not in a function of its own, whose state machine every
            // wake-up of every request would pass through.
            let (mut name, mut hop) = (name, 0);
            loop {
                recorded = single;
                let out = if hop == 0 {
                    st.outgoing(src, (flow, i), entry)
                } else {
                    st.hop_outgoing(src, (flow, i), entry)
                };
                let out = match out {
                    Ok(out) => out,
                    Err(unsent) => {
                        // Not written: counted `check`, the iteration ends.
                        let why = st.unsent_reason(src, (flow, i), entry, unsent);
                        self.recorder.borrow_mut().unsent_step(name, due, &why, single);
                        result = result.and(Err(ErrorKind::Check));
                        break 'entries;
                    }
                };
                let outcome = lane.send_file(&out, spec.keepalive(), at + spec.timeout).await;
                let now = Instant::now();
                ended = Some(now);
                // The request may be lent by `st`, which judges the answer.
                let sent_size = out.size();
                drop(out);
                let mut recorder = self.recorder.borrow_mut();
                answered |= outcome.is_ok();
                let (next, received, verdict, checked) =
                    judged(st, (src, (flow, i), entry), hop, &outcome, &mut recorder);
                let step = Step {
                    name,
                    sent_size,
                    times: (due, at, now),
                    received,
                    result: verdict.result,
                    checked,
                    whole: single,
                };
                recorder.record_step(&step);
                if let Some(setup) = lane.take_opened() {
                    recorder.opened(due, now, setup);
                }
                result = result.and(verdict.result);
                let then = match next {
                    Next::Judge if verdict.capture_failed => Then::End,
                    Next::Judge => Then::Next,
                    Next::Hop(to) => Then::Hop(to),
                    Next::Stop(to, why) => {
                        recorder.unsent_step(to, now, &why, false);
                        result = result.and(Err(ErrorKind::Check));
                        Then::End
                    }
                };
                drop(recorder);
                self.failpoint_tick();
                match then {
                    Then::Hop(to) => {
                        (name, hop) = (to, hop + 1);
                        at = Instant::now();
                        due = at;
                    }
                    Then::Next => break,
                    Then::End => break 'entries,
                }
            }
        }
        if !recorded {
            let now = ended.unwrap_or_else(Instant::now);
            self.recorder.borrow_mut().record_iteration(intended, now, result);
        }
        if spec.per_iteration() {
            lane.close();
        }
        self.in_flight.set(self.in_flight.get() - 1);
        answered
    }
}

/// The answer to (or the failure of) request `i` of flow `flow` (`entry`), or hop `hop` of the
/// redirects it follows, judged (its checks on the recorder's turn): what follows it, the size
/// of the answer, the verdict, and whether its checks ran and failed (`None`: not their turn,
/// or no answer). In line: called once per request from the iteration's loop.
#[inline]
fn judged(
    st: &mut IterState,
    (src, at, entry): (&FileSource, (usize, usize), &Entry),
    hop: usize,
    outcome: &Outcome<'_>,
    recorder: &mut Recorder,
) -> (Next, Option<u64>, Verdict, Option<bool>) {
    match outcome {
        Ok(a) => match st.redirect(src, at, entry, a, hop) {
            Next::Judge => {
                let turn = recorder.check_turn();
                let v = st.verdict(src, at, entry, a, turn);
                (Next::Judge, Some(a.received), v, turn.then_some(v.result.is_err()))
            }
            next => (next, Some(a.received), Verdict { result: Ok(()), capture_failed: false }, None),
        },
        Err(kind) => (Next::Judge, None, Verdict { result: Err(*kind), capture_failed: true }, None),
    }
}

/// What follows a request of an iteration.
enum Then {
    /// The iteration's next request.
    Next,
    /// The redirect's hop, recorded under this name.
    Hop(usize),
    /// Nothing: the iteration ends.
    End,
}
