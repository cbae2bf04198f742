//! The steps of a scenario outside its flows: `[reset]`, which empties the store
//! between verification and measurement (a command, requests, or the
//! orchestrator's), and `[setup]`, requests run once before the measured load
//! (log in once, as k6's `setup()`), whose captures every user of the load, every
//! verification case and the reset read (docs/scenarios.md, "Once per run").

use serde::Deserialize;
use toml::Spanned;

use super::{Ctx, Known, Reset};
use crate::error::ParseError;
use crate::model::HurlFile;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawReset {
    by: Option<Spanned<String>>,
    command: Option<Vec<String>>,
    file: Option<Spanned<String>>,
    hurl: Option<Spanned<String>>,
}

/// `[setup]`: its requests, a `.hurl` file or inline Hurl.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSetup {
    file: Option<Spanned<String>>,
    hurl: Option<Spanned<String>>,
}

/// The `[setup]` step's requests; each must have an answer to check (`HTTP ...`), since a
/// setup that fails stops the run before its load.
pub(super) fn setup(cx: &Ctx<'_>, r: &Spanned<RawSetup>, known: Known<'_>) -> Result<HurlFile, ParseError> {
    let rs = r.get_ref();
    let hurl = cx.requests(r.span(), rs.file.as_ref(), rs.hurl.as_ref(), known)?;
    if hurl.entries.is_empty() {
        return Err(cx.syntax(r.span(), "[setup] has no request"));
    }
    Ok(hurl)
}

/// The `[reset]` step: a command, requests, or the orchestrator's (`by = "contestant"`).
pub(super) fn reset(cx: &Ctx<'_>, r: &Spanned<RawReset>, known: Known<'_>) -> Result<Reset, ParseError> {
    let rr = r.get_ref();
    if let Some(by) = &rr.by {
        if by.get_ref() != "contestant" {
            return Err(cx.syntax(
                by.span(),
                format!("unknown `by` {:?}; the one value is \"contestant\"", by.get_ref()),
            ));
        }
        if rr.command.is_some() || rr.file.is_some() || rr.hurl.is_some() {
            return Err(cx.syntax(
                r.span(),
                "[reset] has `by = \"contestant\"`, a `command` or requests, one of them",
            ));
        }
        return Ok(Reset::Contestant);
    }
    match (&rr.command, rr.file.is_some() || rr.hurl.is_some()) {
        (Some(c), false) if !c.is_empty() => Ok(Reset::Command(c.clone())),
        (None, true) => Ok(Reset::Hurl(cx.requests(r.span(), rr.file.as_ref(), rr.hurl.as_ref(), known)?)),
        _ => Err(cx.syntax(
            r.span(),
            "[reset] has a `command` (a non-empty list) or requests (`file` or `hurl`), one of them",
        )),
    }
}
