//! An entry's request rendered as Hurl sends it through curl: `[Query]`
//! appended to the URL (each value escaped as `curl_easy_escape` does), the
//! URL's credentials and `[BasicAuth]` as an `Authorization: Basic` header,
//! `[Cookies]` as one `Cookie` header, `[Form]` as an urlencoded body and
//! `[Multipart]` as curl's `multipart/form-data`, the `header`, `user` and
//! `compressed` options, and the `Content-Type` a body implies when the entry
//! sets none.
//!
//! What a request's line and headers carry is checked as it is written
//! ([`Template::render_head`]): no value with a CR, LF or NUL, at most
//! [`MAX_HEAD_VALUES`] bytes of values, no host from an answer or a data row, no
//! header stackbench writes itself named by a variable (docs/scenarios.md, "Limits").
//!
//! A template is written here too ([`Template::render`]): the syntax tree is plain data, and
//! a placeholder with filters needs the evaluator.

use base64::Engine as _;

use super::Request;
use crate::error::Pos;
use crate::model::{BodyKind, Entry, MultipartParam, OptionValue, Param};
use crate::template::{
    ExprStart, MAX_HEAD_VALUES, Part, RenderError, Template, Unwritable, Vars, unsafe_byte,
};

impl Entry {
    /// Renders the request into `req` (cleared first). A value that cannot go in the URL or
    /// a header (a CR, LF or NUL; more than the head may carry, [`MAX_HEAD_VALUES`]; a host
    /// from an answer or a data row), or a header name from a variable that is one
    /// stackbench writes itself, is an error: the request is not sent.
    pub fn render(&self, vars: &mut Vars, req: &mut Request) -> Result<(), RenderError> {
        req.url.clear();
        req.headers.clear();
        req.body.clear();
        req.method = None;
        req.cookies_at = None;
        req.reach = if self.options.is_empty() { None } else { self.reach(vars)?.map(Box::new) };
        let mut room = MAX_HEAD_VALUES;
        let base = matches!(self.url.parts.first(), Some(Part::Var { name, .. }) if &**name == "base_url");
        let untrusted = self.url.render_head(vars, &mut req.url, &mut room, base)?;
        // A host comes from the file or the user, never from an answer or a data row.
        if let Some((at, name, pos)) = untrusted
            && at < authority_end(&req.url)
        {
            return Err(RenderError::unwritable(name, pos, Unwritable::Host));
        }
        if !self.query.is_empty() {
            let sep = match req.url.last() {
                Some(b'?') => "",
                _ if req.url.contains(&b'?') => "&",
                _ => "?",
            };
            req.url.extend_from_slice(sep.as_bytes());
            encode_params(&self.query, vars, &mut req.url, &mut room)?;
        }
        if has_dot_segment(&req.url) && !self.path_as_is(vars)? {
            remove_dot_segments(&mut req.url);
        }
        let mut has = Has::default();
        for h in &self.headers {
            let start = req.headers.len();
            h.name.render_head(vars, &mut req.headers, &mut room, false)?;
            let name = &req.headers[start..];
            has.see(name);
            own_header(&h.name, name, self.pos)?;
            req.headers.extend_from_slice(b": ");
            h.value.render_head(vars, &mut req.headers, &mut room, false)?;
            req.headers.extend_from_slice(b"\r\n");
        }
        self.option_headers(vars, req, &mut has, &mut room)?;
        if let Some(p) = &self.basic_auth
            && !has.authorization
        {
            let mut user = p.name.render_string(vars)?;
            user.push(':');
            user.push_str(&p.value.render_string(vars)?);
            basic(&user, &mut req.headers);
            has.authorization = true;
        }
        if let Some(user) = take_credentials(&mut req.url)
            && !has.authorization
        {
            basic(&user, &mut req.headers);
        }
        // As curl: a `Cookie` header the entry writes itself replaces `[Cookies]`.
        if !self.cookies.is_empty() && !has.cookie {
            req.headers.extend_from_slice(b"Cookie: ");
            req.cookies_at = Some(req.headers.len());
            for (i, c) in self.cookies.iter().enumerate() {
                if i > 0 {
                    req.headers.extend_from_slice(b"; ");
                }
                c.name.render_head(vars, &mut req.headers, &mut room, false)?;
                req.headers.push(b'=');
                c.value.render_head(vars, &mut req.headers, &mut room, false)?;
            }
            req.headers.extend_from_slice(b"\r\n");
        }
        if !self.form.is_empty() {
            let mut unbounded = usize::MAX;
            encode_params(&self.form, vars, &mut req.body, &mut unbounded)?;
            if !has.content_type {
                req.headers.extend_from_slice(b"Content-Type: application/x-www-form-urlencoded\r\n");
            }
        } else if !self.multipart.is_empty() {
            let boundary = format!("------------------------{:016x}", vars.rng.next_u64());
            self.multipart(&boundary, vars, &mut req.body)?;
            if !has.content_type {
                req.headers.extend_from_slice(
                    format!("Content-Type: multipart/form-data; boundary={boundary}\r\n").as_bytes(),
                );
            }
        } else if let Some(body) = &self.body {
            body.template.render(vars, &mut req.body)?;
        }
        req.headers.extend_from_slice(self.implied_headers(has.content_type));
        req.headers.extend_from_slice(Entry::implied_accept(has.accept));
        Ok(())
    }

    /// Whether the file gives this request's `Host` (then it takes the place of the one
    /// computed from the target).
    pub fn own_host(&self) -> bool {
        self.headers.iter().any(|h| h.name.as_literal().is_some_and(|n| n.eq_ignore_ascii_case("host")))
    }

    /// curl's `Accept: */*`, which Hurl sends when the entry sets no `Accept` header.
    pub fn implied_accept(has_accept: bool) -> &'static [u8] {
        if has_accept { b"" } else { b"Accept: */*\r\n" }
    }

    /// The header lines the request gets beside its own (`has_type`: whether one of them
    /// is `Content-Type`): a JSON or GraphQL body's `application/json`, an XML body's
    /// `application/xml`, as in Hurl.
    pub fn implied_headers(&self, has_type: bool) -> &'static [u8] {
        if has_type || !self.form.is_empty() || !self.multipart.is_empty() {
            return b"";
        }
        match self.body.as_ref().map(|b| b.kind) {
            Some(BodyKind::Json | BodyKind::GraphQl) => b"Content-Type: application/json\r\n",
            Some(BodyKind::Xml) => b"Content-Type: application/xml\r\n",
            _ => b"",
        }
    }

    /// The headers of its `header`, `user` and `compressed` options.
    fn option_headers(
        &self,
        vars: &mut Vars,
        req: &mut Request,
        has: &mut Has,
        room: &mut usize,
    ) -> Result<(), RenderError> {
        for o in &self.options {
            match (o.name, &o.value) {
                ("header", OptionValue::Text(t)) => {
                    let start = req.headers.len();
                    t.render_head(vars, &mut req.headers, room, false)?;
                    let line = &req.headers[start..];
                    let colon = line.iter().position(|&b| b == b':').unwrap_or(line.len());
                    let name = &req.headers[start..start + colon];
                    has.see(name);
                    own_header(t, name, o.pos)?;
                    req.headers.extend_from_slice(b"\r\n");
                }
                ("user", OptionValue::Text(t)) if !has.authorization => {
                    basic(&t.render_string(vars)?, &mut req.headers);
                    has.authorization = true;
                }
                ("compressed", OptionValue::Bool(b))
                    if !has.accept_encoding && super::options::flag(b, vars)? =>
                {
                    req.headers.extend_from_slice(b"Accept-Encoding: gzip, deflate, br\r\n");
                    has.accept_encoding = true;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The multipart body, each part as curl writes it.
    fn multipart(&self, boundary: &str, vars: &mut Vars, out: &mut Vec<u8>) -> Result<(), RenderError> {
        for m in &self.multipart {
            out.extend_from_slice(
                format!("--{boundary}\r\nContent-Disposition: form-data; name=\"").as_bytes(),
            );
            match m {
                MultipartParam::Field(p) => {
                    out.extend_from_slice(mime_escape(&p.name.render_string(vars)?).as_bytes());
                    out.extend_from_slice(b"\"\r\n\r\n");
                    p.value.render(vars, out)?;
                }
                MultipartParam::File { name, filename, content_type, data, .. } => {
                    out.extend_from_slice(mime_escape(&name.render_string(vars)?).as_bytes());
                    out.extend_from_slice(b"\"; filename=\"");
                    let base = filename.rsplit('/').next().unwrap_or(filename);
                    out.extend_from_slice(mime_escape(base).as_bytes());
                    out.extend_from_slice(b"\"\r\nContent-Type: ");
                    content_type.render(vars, out)?;
                    out.extend_from_slice(b"\r\n\r\n");
                    out.extend_from_slice(data);
                }
            }
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
        Ok(())
    }
}

/// Which headers the entry sets itself.
#[derive(Default)]
#[expect(clippy::struct_excessive_bools, reason = "one flag per header the rendering may add")]
struct Has {
    accept: bool,
    content_type: bool,
    authorization: bool,
    accept_encoding: bool,
    cookie: bool,
}

impl Has {
    fn see(&mut self, name: &[u8]) {
        let name = name.trim_ascii();
        self.accept |= name.eq_ignore_ascii_case(b"accept");
        self.content_type |= name.eq_ignore_ascii_case(b"content-type");
        self.authorization |= name.eq_ignore_ascii_case(b"authorization");
        self.accept_encoding |= name.eq_ignore_ascii_case(b"accept-encoding");
        self.cookie |= name.eq_ignore_ascii_case(b"cookie");
    }
}

/// `name=value&...`, each value escaped as `curl_easy_escape` does (names as written, as
/// in a request's line: [`Template::render_head`]); `room` spent by both.
fn encode_params(
    params: &[Param],
    vars: &mut Vars,
    out: &mut Vec<u8>,
    room: &mut usize,
) -> Result<(), RenderError> {
    for (i, p) in params.iter().enumerate() {
        if i > 0 {
            out.push(b'&');
        }
        p.name.render_head(vars, out, room, false)?;
        out.push(b'=');
        let value = p.value.render_string(vars)?;
        let value = super::filter::url_encode(&value, false);
        *room = room.checked_sub(value.len()).ok_or_else(|| {
            let (name, pos) = p.value.vars().first().copied().unwrap_or(("", p.pos));
            RenderError::unwritable(name, pos, Unwritable::TooLong { max: MAX_HEAD_VALUES })
        })?;
        out.extend_from_slice(value.as_bytes());
    }
    Ok(())
}

/// `Err` when a header's name, `written` from template `t`, is one stackbench writes itself
/// (`Host`, `Content-Length`, `Transfer-Encoding`) and came from a variable: the file's own
/// are settled when it loads ([`crate::framing::settle`]).
fn own_header(t: &Template, written: &[u8], pos: crate::error::Pos) -> Result<(), RenderError> {
    if t.as_literal().is_none() && crate::framing::written_by_us(written.trim_ascii()) {
        let (var, pos) = t.vars().first().copied().unwrap_or(("", pos));
        return Err(RenderError::unwritable(var, pos, Unwritable::OwnHeader));
    }
    Ok(())
}

/// Where the authority (`user@host:port`) of `url` ends: before its path, query or fragment.
pub(crate) fn authority_end(url: &[u8]) -> usize {
    let start = url.windows(3).position(|w| w == b"://").map_or(0, |i| i + 3);
    url[start..].iter().position(|b| matches!(b, b'/' | b'?' | b'#')).map_or(url.len(), |i| start + i)
}

impl Entry {
    /// `path-as-is: true`: the URL's path is sent as written, its dot segments kept.
    fn path_as_is(&self, vars: &mut Vars) -> Result<bool, RenderError> {
        let mut as_is = false;
        for o in self.options.iter().filter(|o| o.name == "path-as-is") {
            if let OptionValue::Bool(b) = &o.value {
                as_is = super::options::flag(b, vars)?;
            }
        }
        Ok(as_is)
    }
}

/// Whether the path of `url` may hold a `.` or `..` segment.
pub fn has_dot_segment(url: &[u8]) -> bool {
    memchr::memmem::find(url, b"/.").is_some()
}

/// The path of `url` (up to its `?` or `#`) without its `.` and `..` segments, as curl sends
/// it unless told `--path-as-is` (RFC 3986, 5.2.4: `/a/./b/../c` is `/a/c`).
pub(crate) fn remove_dot_segments(url: &mut Vec<u8>) {
    let start = authority_end(url);
    let end = url[start..].iter().position(|b| matches!(b, b'?' | b'#')).map_or(url.len(), |i| start + i);
    let mut out: Vec<&[u8]> = Vec::new();
    let path = url[start..end].to_vec();
    let segments: Vec<&[u8]> = path.split(|&b| b == b'/').skip(1).collect();
    let last = segments.len().saturating_sub(1);
    for (i, seg) in segments.iter().enumerate() {
        match *seg {
            b"." => {}
            b".." => {
                out.pop();
            }
            s => out.push(s),
        }
        // A path that ends in a dot segment ends in `/`.
        if i == last && matches!(*seg, b"." | b"..") {
            out.push(b"");
        }
    }
    let mut clean = Vec::with_capacity(path.len());
    for s in out {
        clean.push(b'/');
        clean.extend_from_slice(s);
    }
    url.splice(start..end, clean);
}

/// `Authorization: Basic` of `user:password`.
fn basic(user: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(b"Authorization: Basic ");
    out.extend_from_slice(base64::engine::general_purpose::STANDARD.encode(user).as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// Takes `user:password@` out of the URL's authority, as curl does, and gives it
/// (percent-decoded).
fn take_credentials(url: &mut Vec<u8>) -> Option<String> {
    let scheme = url.windows(3).position(|w| w == b"://")? + 3;
    let end = authority_end(url);
    let at = url[scheme..end].iter().rposition(|&b| b == b'@')? + scheme;
    let user: Vec<u8> = url.drain(scheme..=at).collect();
    let user = String::from_utf8_lossy(&user[..user.len() - 1]).into_owned();
    let mut out = Vec::new();
    let b = user.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let Some(x) = user.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(x);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// A multipart name or filename as curl writes it: `"`, CR and LF percent-escaped.
fn mime_escape(s: &str) -> String {
    s.replace('"', "%22").replace('\r', "%0D").replace('\n', "%0A")
}

/// A template written with its variables: the one writer of its parts, placeholders with
/// filters evaluated ([`super::render_expr`]).
impl Template {
    /// Writes the template with `vars` into `out` (appending).
    pub fn render(&self, vars: &mut Vars, out: &mut Vec<u8>) -> Result<(), RenderError> {
        for p in &self.parts {
            match p {
                Part::Lit(l) => out.extend_from_slice(l.as_bytes()),
                Part::Var { name, escape, pos } => {
                    vars.write(name, *escape, out).map_err(|()| RenderError::no_value(name, *pos))?;
                }
                Part::Bytes(b) => out.extend_from_slice(b),
                Part::Expr { expr, escape, pos } => super::render_expr(expr, *escape, *pos, vars, out)?,
            }
        }
        Ok(())
    }

    /// The template rendered as text (its bytes read as UTF-8, lossily).
    pub fn render_string(&self, vars: &mut Vars) -> Result<String, RenderError> {
        let mut out = Vec::new();
        self.render(vars, &mut out)?;
        Ok(String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
    }

    /// As [`Template::render`], for a request's line or a header: no value written in it (a
    /// variable's, or a placeholder's with filters) may hold a CR, LF or NUL
    /// ([`unsafe_byte`]), and `room` (what the head may still carry of those values,
    /// [`MAX_HEAD_VALUES`]) is spent by each value. `skip_first`: the first part,
    /// `{{base_url}}` (the target), is not spent. Returns where in `out` the first value from
    /// an answer or a data row was written ([`Vars::untrusted`]), with its variable's name and
    /// place.
    pub fn render_head(
        &self,
        vars: &mut Vars,
        out: &mut Vec<u8>,
        room: &mut usize,
        skip_first: bool,
    ) -> Result<Option<(usize, &str, Pos)>, RenderError> {
        let mut untrusted = None;
        for (i, p) in self.parts.iter().enumerate() {
            let start = out.len();
            let (name, pos): (&str, Pos) = match p {
                Part::Lit(l) => {
                    out.extend_from_slice(l.as_bytes());
                    continue;
                }
                // The file's own bytes (bounded when it loads), as its text.
                Part::Bytes(b) => {
                    out.extend_from_slice(b);
                    continue;
                }
                Part::Var { name, escape, pos } => {
                    // Measured before it is written: a long value is never copied.
                    if !(skip_first && i == 0) && vars.get(name).is_some_and(|v| v.text.len() > *room) {
                        let why = Unwritable::TooLong { max: MAX_HEAD_VALUES };
                        return Err(RenderError::unwritable(name, *pos, why));
                    }
                    vars.write(name, *escape, out).map_err(|()| RenderError::no_value(name, *pos))?;
                    (name, *pos)
                }
                Part::Expr { expr, escape, pos } => {
                    super::render_expr(expr, *escape, *pos, vars, out)?;
                    let name = match &expr.start {
                        ExprStart::Var(n) => &**n,
                        _ => &*expr.source,
                    };
                    (name, *pos)
                }
            };
            let written = &out[start..];
            if let Some(b) = unsafe_byte(written) {
                out.truncate(start);
                return Err(RenderError::unwritable(name, pos, Unwritable::Byte(b)));
            }
            if !(skip_first && i == 0) {
                *room = room.checked_sub(written.len()).ok_or_else(|| {
                    RenderError::unwritable(name, pos, Unwritable::TooLong { max: MAX_HEAD_VALUES })
                })?;
            }
            if untrusted.is_none() && vars.untrusted(name) {
                untrusted = Some((start, name, pos));
            }
        }
        Ok(untrusted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_leave_the_url() {
        let mut url = b"http://bob:s%40cret@h:1/p?a@b".to_vec();
        assert_eq!(take_credentials(&mut url).as_deref(), Some("bob:s@cret"));
        assert_eq!(url, b"http://h:1/p?a@b");
        let mut url = b"http://h/p?x=a@b".to_vec();
        assert_eq!(take_credentials(&mut url), None);
    }

    #[test]
    fn dot_segments_are_removed_as_curl_removes_them() {
        let clean = |url: &str| {
            let mut u = url.as_bytes().to_vec();
            super::remove_dot_segments(&mut u);
            String::from_utf8(u).unwrap()
        };
        assert_eq!(clean("http://h:1/any/../hello?x=/../y"), "http://h:1/hello?x=/../y");
        assert_eq!(clean("http://h/a/./b/../c"), "http://h/a/c");
        assert_eq!(clean("http://h/a/b/.."), "http://h/a/");
        assert_eq!(clean("http://h/../../a/."), "http://h/a/");
        assert_eq!(clean("http://h/.well-known/x"), "http://h/.well-known/x");
        assert_eq!(clean("http://h?q=1"), "http://h?q=1");
    }
}
