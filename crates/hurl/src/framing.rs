//! The headers stackbench writes for every request, and what a file may say of
//! them (docs/scenarios.md, "Headers the file sets"): a request is never sent with
//! two `Host` or two framing headers (RFC 9112 asks a server to refuse those).
//!
//! - `Host`: at most one; it takes the place of the one computed from the target.
//! - `Content-Length`: stackbench frames every body itself. The file's is left out of
//!   the request when it says the body's length (the framing says the same); a value
//!   that does not, or a body whose length is known only once written, is refused when
//!   the file loads (Hurl sends it as written: a documented difference).
//! - `Transfer-Encoding`: refused; the body is framed with `Content-Length`.
//!
//! A header name written with a variable is checked when the request is written
//! ([`crate::Entry::render`]). The file's own text of a request's line and headers is
//! bounded here too ([`MAX_HEAD_VALUES`], as the values its variables put there).

use crate::error::{ErrorKind, ParseError, Pos};
use crate::model::{Entry, HurlFile};
use crate::template::MAX_HEAD_VALUES;

/// Whether a header named `name` is one stackbench writes for every request itself.
pub fn written_by_us(name: &[u8]) -> bool {
    [&b"host"[..], b"content-length", b"transfer-encoding"].iter().any(|n| name.eq_ignore_ascii_case(n))
}

/// Settles the headers of each request of `file` that stackbench writes (see the module's
/// notes): a file's `Content-Length` that says its body's length is left out; any other
/// refused, with `Transfer-Encoding`, a second `Host`, and a request whose line and headers
/// are longer than [`MAX_HEAD_VALUES`] as written.
pub fn settle(file: &mut HurlFile) -> Result<(), ParseError> {
    let err =
        |pos: Pos, msg: String| ParseError { file: file.file.clone(), pos, kind: ErrorKind::Syntax(msg) };
    for e in &mut file.entries {
        let mut host = false;
        let mut i = 0;
        while let Some(h) = e.headers.get(i) {
            let name = h.name.as_literal().unwrap_or_default();
            if name.eq_ignore_ascii_case("host") {
                if host {
                    return Err(err(h.pos, "`Host` is given twice: a request has one".into()));
                }
                host = true;
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                return Err(err(
                    h.pos,
                    "stackbench frames every request's body itself, with Content-Length: leave \
                     `Transfer-Encoding` out (Hurl sends it as written)"
                        .into(),
                ));
            } else if name.eq_ignore_ascii_case("content-length") {
                content_length(e, i).map_err(|why| err(h.pos, why))?;
                e.headers.remove(i);
                continue;
            }
            i += 1;
        }
        own_header_option(e).map_err(|(pos, why)| err(pos, why))?;
        let written = e.url.literal_len()
            + e.headers.iter().map(|h| h.name.literal_len() + h.value.literal_len() + 4).sum::<usize>();
        if written > MAX_HEAD_VALUES {
            return Err(err(
                e.pos,
                format!(
                    "this request's line and headers take {written} bytes as written, more than {MAX_HEAD_VALUES}, \
                     the most a request's head may carry"
                ),
            ));
        }
    }
    Ok(())
}

/// Whether header `i` of `e`, a `Content-Length`, says the length of `e`'s body: `Err` says
/// why not.
fn content_length(e: &Entry, i: usize) -> Result<(), String> {
    let said = e.headers[i].value.as_literal().map(str::trim);
    let body = match &e.body {
        // A form's and a multipart body's length is known once they are written.
        _ if !e.form.is_empty() || !e.multipart.is_empty() => None,
        // A `file,` body's that could not be read yet, or whose name is a template.
        _ if e.body_file.as_ref().is_some_and(|f| f.unread.is_some() || f.name.as_literal().is_none()) => {
            None
        }
        None => Some(0),
        Some(b) => b.template.as_literal().map(str::len),
    };
    let leave_out = "leave it out: stackbench frames every body itself (Hurl sends the header as written)";
    match (said.map(str::parse::<usize>), body) {
        (Some(Ok(n)), Some(len)) if n == len => Ok(()),
        (Some(Ok(n)), Some(len)) => {
            Err(format!("`Content-Length: {n}` does not match the body, {len} bytes; {leave_out}"))
        }
        (_, None) => Err(format!(
            "a Content-Length is sent only when it matches the body, and this body's length is known only \
             once it is written; {leave_out}"
        )),
        _ => Err(format!("`Content-Length` is a number of bytes; {leave_out}")),
    }
}

/// `Err` for a `header` option (`[Options]`) that names, as written, a header stackbench
/// writes itself: a file's `Host` is a header line, its body framed by stackbench.
fn own_header_option(e: &Entry) -> Result<(), (Pos, String)> {
    for o in &e.options {
        let (Some("header"), crate::model::OptionValue::Text(t)) = (Some(o.name), &o.value) else { continue };
        let Some(crate::template::Part::Lit(l)) = t.parts.first() else { continue };
        if let Some((name, _)) = l.split_once(':')
            && written_by_us(name.trim().as_bytes())
        {
            return Err((
                o.pos,
                format!(
                    "the `header` option cannot set `{}`: stackbench writes it (give a `Host` as a header \
                     line; a body is framed by stackbench)",
                    name.trim()
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settled(text: &str) -> Result<HurlFile, String> {
        let mut f = crate::parse::parse("f.hurl", text).map_err(|e| e.to_string())?;
        settle(&mut f).map_err(|e| e.to_string())?;
        Ok(f)
    }

    /// Issue 45 #12: a request is sent with one `Host` and one framing.
    #[test]
    fn framing_headers_are_settled_or_refused() {
        let f = settled("POST http://h/x\nContent-Length: 5\nX-A: 1\n`hello`\n").unwrap();
        let names: Vec<_> = f.entries[0].headers.iter().map(|h| h.name.source()).collect();
        assert_eq!(names, ["X-A"], "a Content-Length that says the body's length is left to the framing");
        assert!(settled("GET http://h/x\ncontent-length: 0\n").unwrap().entries[0].headers.is_empty());
        let refused = |text: &str| settled(text).unwrap_err();
        let e = refused("POST http://h/x\nContent-Length: 0\nTransfer-Encoding: chunked\n`hello`\n");
        assert!(e.starts_with("f.hurl:2:1: `Content-Length: 0` does not match the body, 5 bytes"), "{e}");
        let e = refused("POST http://h/x\nTransfer-Encoding: chunked\n`hello`\n");
        assert!(e.starts_with("f.hurl:2:1: stackbench frames every request's body itself"), "{e}");
        let e = refused("POST http://h/x\nContent-Length: 12\n{\"a\": \"{{v}}\"}\n");
        assert!(e.contains("known only once it is written"), "{e}");
        let e = refused("GET http://h/x\nHost: a\nhost: b\n");
        assert!(e.starts_with("f.hurl:3:1: `Host` is given twice"), "{e}");
        let e = refused(&format!("GET http://h/{}\n", "x".repeat(MAX_HEAD_VALUES)));
        assert!(e.starts_with("f.hurl:1:1: this request's line and headers take"), "{e}");
        assert_eq!(settled("GET http://h/x\nHost: vhost\n").unwrap().entries[0].headers.len(), 1);
        let e = refused("POST http://h/x\nContent-Length: 3\n[Form]\na: b\n");
        assert!(e.contains("known only once it is written"), "{e}");
        let e = refused("GET http://h/x\n[Options]\nheader: Content-Length: 0\n");
        assert!(e.starts_with("f.hurl:3:1: the `header` option cannot set `Content-Length`"), "{e}");
    }

    #[test]
    fn the_headers_written_by_us() {
        for name in ["Host", "CONTENT-LENGTH", "transfer-encoding"] {
            assert!(written_by_us(name.as_bytes()), "{name}");
        }
        assert!(!written_by_us(b"Content-Type") && !written_by_us(b"Hostname"));
    }
}
