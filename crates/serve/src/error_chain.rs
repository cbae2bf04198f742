//! An error's whole story in one line, for the stores' and drivers' messages: the
//! client libraries wrap the database's own words (`relation "items" does not exist`)
//! in a source a plain `to_string()` leaves out.

/// An error's message followed by its sources' (`db error: relation "items"
/// does not exist`), each source only when the message does not already say it.
pub(crate) trait ErrorChain {
    fn chain(&self) -> String;
}

impl<E: std::error::Error + ?Sized> ErrorChain for E {
    fn chain(&self) -> String {
        let mut text = self.to_string();
        let mut source = self.source();
        while let Some(e) = source {
            let more = e.to_string();
            if !text.contains(&more) {
                text.push_str(": ");
                text.push_str(&more);
            }
            source = e.source();
        }
        text
    }
}
