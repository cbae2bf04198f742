//! The `[grpc]` table of a gRPC scenario file: its `.proto` (on disk, or embedded with a
//! built-in scenario's files), and the shorthand call (`method` and `message`) that makes a
//! flow of one call (docs/scenarios.md, "h2c and gRPC scenario files"). Its other calls are
//! the file's `[[flow]]`s, parsed as any flow.

use std::path::PathBuf;

use toml::Spanned;

use super::{Ctx, Flow, Known, RawGrpc, Span};
use crate::error::{ErrorKind, ParseError, Pos};
use crate::files::Files;

/// The gRPC form: each request of the flows, cases and reset is a unary call, written as a
/// request: `POST {{base_url}}/package.Service/Method` with the message as its JSON body
/// (docs/scenarios.md, "h2c and gRPC scenario files").
#[derive(Debug, Clone, PartialEq)]
pub struct Grpc {
    /// The `.proto`: its path (relative names resolved from the scenario's directory).
    pub proto: PathBuf,
    /// The `.proto`'s text when the scenario's files are embedded in the binary (a built-in
    /// scenario, [`super::Scenario::parse_embedded`]); `None`: it is read from `proto` on disk, its
    /// directory the import path.
    pub source: Option<String>,
    /// `method` and `message`: a flow of one call, named after the method, with `HTTP 200`
    /// expected.
    pub call: Option<GrpcCall>,
    /// Where `proto` is written (`file:line:col`), for what is wrong with the `.proto`.
    pub key: String,
}

/// The `[grpc]` table's call.
#[derive(Debug, Clone, PartialEq)]
pub struct GrpcCall {
    /// `package.Service/Method`.
    pub method: String,
    /// The request message as JSON, templates allowed.
    pub message: crate::template::Template,
}

pub(super) fn grpc(cx: &Ctx<'_>, g: &RawGrpc, known: &dyn Fn(&str) -> bool) -> Result<Grpc, ParseError> {
    let at = cx.pos(g.proto.span().start);
    let (proto, source) = match cx.files {
        Files::Dir { dir, root } => {
            // Read once here, under the root and within the size, so that a `.proto` that
            // cannot be is refused at its key; it is compiled from disk (its imports beside it).
            let path = dir.join(g.proto.get_ref());
            let real = root.read(&path).and_then(|_| root.inside(&path)).map_err(|e| {
                cx.err(g.proto.span(), ErrorKind::Io(format!("cannot read {}: {e}", path.display())))
            })?;
            (real, None)
        }
        // A built-in's `.proto` is compiled into the binary with the scenario.
        Files::Embedded { .. } => {
            let (path, text) = cx.files.read(g.proto.get_ref()).map_err(|e| {
                let path = cx.files.dir().join(g.proto.get_ref());
                cx.err(g.proto.span(), ErrorKind::Io(format!("{}: {e}", path.display())))
            })?;
            (PathBuf::from(path), Some(text))
        }
    };
    let call = match (&g.method, &g.message) {
        (None, None) => None,
        (Some(m), None) => return Err(cx.syntax(m.span(), "`method` needs the `message` it sends")),
        (None, Some(m)) => return Err(cx.syntax(m.span(), "`message` needs the `method` it is sent to")),
        (Some(method), Some(message)) => Some(grpc_call(cx, method, message, known)?),
    };
    Ok(Grpc { proto, source, call, key: format!("{}:{at}", cx.file) })
}

fn grpc_call(
    cx: &Ctx<'_>,
    method: &Spanned<String>,
    message: &Spanned<String>,
    known: &dyn Fn(&str) -> bool,
) -> Result<GrpcCall, ParseError> {
    let m = method.get_ref();
    if !m.contains('/') || m.starts_with('/') || m.ends_with('/') {
        return Err(cx.syntax(method.span(), "`method` is `package.Service/Method`"));
    }
    // The message is JSON with templates: parsed as a JSON body of a request.
    let text = format!("POST grpc\n{}\n", message.get_ref());
    let hurl = crate::load(cx.file, &text, known)
        .map_err(|e| cx.syntax(message.span(), format!("`message`: {}", e.kind)))?;
    let body = hurl
        .entries
        .into_iter()
        .next()
        .and_then(|e| e.body)
        .filter(|b| b.kind == crate::model::BodyKind::Json);
    let mut template = body.ok_or_else(|| cx.syntax(message.span(), "`message` is a JSON object"))?.template;
    // Positions in the TOML: the message's text begins at line 2 of the request parsed above.
    let start = cx.pos(message.span().start);
    let src = &cx.text[message.span()];
    let offset = u32::from(src.starts_with("'''") || src.starts_with("\"\"\""));
    template.map_positions(|p| {
        let line = p.line.saturating_sub(1).max(1);
        let col = if line == 1 && offset == 0 { p.col + start.col } else { p.col };
        Pos { line: line + start.line - 1 + offset, col }
    });
    Ok(GrpcCall { method: m.clone(), message: template })
}

/// The flow of the `[grpc]` table's call: the call as a request (see [`Grpc`]), placed at
/// `method`.
pub(super) fn grpc_flow(
    cx: &Ctx<'_>,
    method: Span,
    g: &GrpcCall,
    known: Known<'_>,
) -> Result<Flow, ParseError> {
    let text = format!("POST {{{{base_url}}}}/{}\nHTTP 200\n", g.method);
    let mut hurl = crate::load(cx.file, &text, known)
        .map_err(|e| cx.syntax(method.clone(), format!("`method`: {}", e.kind)))?;
    let at = cx.pos(method.start);
    hurl.map_positions(|_| at);
    let entry = &mut hurl.entries[0];
    entry.body = Some(crate::model::Body { kind: crate::model::BodyKind::Json, template: g.message.clone() });
    Ok(Flow { name: g.method.clone(), weight: 1, hurl, request_names: vec![g.method.clone()] })
}
