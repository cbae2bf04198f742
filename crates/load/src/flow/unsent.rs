//! Why a request of an iteration was not sent ([`Unsent`]), and the reason the
//! run records for it, said as `verify` says it ([`IterState::unsent_reason`]):
//! every such request counts `check` on its name, with that reason.

use stackbench_hurl::{Entry, Unwritable};

use super::{FileSource, IterState};

/// Why a request of an iteration was not sent: it counts `check` on its request, with the
/// reason [`IterState::unsent_reason`] gives, and ends the iteration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unsent {
    /// A variable could not be written: it has no value (a capture of this iteration found
    /// nothing, an expression without one), a placeholder's filters fail on it, or its value
    /// cannot go where it stands (a CR, LF or NUL in the URL or a header, more than the head
    /// may carry, a header name stackbench writes itself, a host from an answer): why.
    Value(Unwritable),
    /// Its URL's origin is none of the file's ([`stackbench_hurl::Routes::locate`],
    /// the check `verify` makes): why.
    Url(String),
    /// Its message does not fit the method's input (a drawn value of another type): why.
    Message(String),
}

impl From<Unwritable> for Unsent {
    fn from(why: Unwritable) -> Unsent {
        Unsent::Value(why)
    }
}

impl IterState {
    /// Why request `i` of flow `flow` (`entry`) was not sent (`unsent`), as `verify` says it:
    /// the variable without a value and, for an expression, why it has none, or why its
    /// value cannot go where it stands.
    pub fn unsent_reason(
        &mut self,
        src: &FileSource,
        (flow, _): (usize, usize),
        entry: &Entry,
        unsent: Unsent,
    ) -> String {
        let file = &src.scenario.flows[flow].hurl.file;
        match unsent {
            Unsent::Message(why) => why,
            Unsent::Url(why) => format!("{file}:{}: {why}", entry.pos),
            Unsent::Value(_) => match entry.render(&mut self.vars, &mut self.req) {
                Err(err) => stackbench_hurl::why_unwritten(file, &err, || {
                    (src.scenario.why_no_value(&err.name, &self.vars))
                        .unwrap_or_else(|| "nothing before it in the iteration gave it one".into())
                }),
                Ok(()) => format!("{file}:{}: the request could not be written", entry.pos),
            },
        }
    }
}
