//! The gRPC calls of a scenario file (`protocol = "grpc"`): its `[grpc] proto`
//! compiled (protox, as `--proto` is, [`crate::grpc_call`]; a built-in's from its
//! text, embedded in the binary) and the method of every request of its flows,
//! verification cases and reset found in it. A
//! call is written as a request (`POST {{base_url}}/package.Service/Method`,
//! the message as its JSON body); its JSON is encoded with the method's input
//! message on every send (templates make it differ between iterations), and
//! its reply decoded to proto3 JSON for the checks that read the body.
//! `stackbench load` and `verify` share it.

use prost_reflect::MethodDescriptor;
use stackbench_hurl::{
    BodyKind, Entry, FileRoot, HurlFile, Kind, Query, Request, Scenario, StoreReset, Vars, cli_value,
};

use crate::grpc_call::{self, CallError};

/// A gRPC scenario's methods, compiled from its `.proto`.
#[derive(Debug, Clone)]
pub struct Calls {
    /// The `.proto`, for messages.
    proto: String,
    methods: Vec<Method>,
    /// For each flow of the scenario, the method (index) of each of its requests.
    pub flows: Vec<Vec<usize>>,
}

#[derive(Debug, Clone)]
struct Method {
    /// `package.Service/Method`.
    call: String,
    desc: MethodDescriptor,
}

impl Calls {
    /// Compiles the scenario's `.proto`, finds the method of each of its requests and
    /// encodes its `[grpc] message` once with the first iteration's variables. The error
    /// says what to fix, at `file:line:col`.
    pub fn new(s: &Scenario, defined: &[(String, String)]) -> Result<Calls, String> {
        let g = s.grpc.as_ref().ok_or_else(|| format!("scenario {:?} has no [grpc] table", s.name))?;
        let proto = g.proto.display().to_string();
        let pool = match (&g.source, &s.root) {
            (Some(text), _) => grpc_call::compile_source(&g.proto, text),
            (None, Some(root)) => {
                let root = FileRoot::new(root, &s.limits).map_err(|e| format!("{}: {e}", g.key))?;
                grpc_call::compile_under(&g.proto, &root)
            }
            (None, None) => grpc_call::compile(&g.proto),
        };
        // The `.proto` is the file's: its mistakes are placed at its `[grpc] proto` key.
        let pool = pool.map_err(|e| match e {
            CallError::Compile { path, why } => format!("{}: [grpc] proto {path}: {why}", g.key),
            other => other.to_string(),
        })?;
        let mut calls = Calls { proto, methods: Vec::new(), flows: Vec::new() };
        let find = |calls: &mut Calls, hurl: &HurlFile| -> Result<Vec<usize>, String> {
            hurl.entries.iter().map(|e| calls.add(&pool, &hurl.file, e)).collect()
        };
        for f in &s.flows {
            let methods = find(&mut calls, &f.hurl)?;
            calls.flows.push(methods);
        }
        for v in &s.verify {
            find(&mut calls, &v.hurl)?;
        }
        if let Some(StoreReset::Hurl(h)) = &s.reset {
            find(&mut calls, h)?;
        }
        // Each call's message with the first iteration's variables: a message that does not fit
        // its method's input is refused before anything is sent. (A message made from an earlier
        // call's captures is known only once sent; one that does not fit then counts `check`.)
        let mut vars = Vars::new(1);
        vars.set("base_url", "http://127.0.0.1", Kind::String);
        for (k, v) in defined {
            let (v, kind) = cli_value(v);
            vars.set(k, &v, kind);
        }
        s.draw(0, &mut vars);
        let mut req = Request::default();
        // The [grpc] table's call, if any, is the last flow.
        let table = s.grpc.as_ref().is_some_and(|g| g.call.is_some()).then(|| s.flows.len() - 1);
        for (i, (flow, methods)) in s.flows.iter().zip(&calls.flows).enumerate() {
            for (entry, &m) in flow.hurl.entries.iter().zip(methods) {
                if entry.render(&mut vars, &mut req).is_ok() {
                    calls.encode(m, &req.body).map_err(|why| {
                        let what = if table == Some(i) { "[grpc] `message`" } else { "the message" };
                        format!("{}:{}: {what}: {why}", flow.hurl.file, entry.pos)
                    })?;
                }
            }
        }
        Ok(calls)
    }

    /// The method `e` calls, added to the table if it is new.
    fn add(&mut self, pool: &prost_reflect::DescriptorPool, file: &str, e: &Entry) -> Result<usize, String> {
        let at = |why: String| format!("{file}:{}: {why}", e.pos);
        let call = call_of(e).ok_or_else(|| {
            at("a gRPC call is written `POST {{base_url}}/package.Service/Method`, the method written out".into())
        })?;
        if &*e.method != "POST" {
            return Err(at(format!("a gRPC call is a POST, not {}", e.method)));
        }
        // A JSON body, or text taken as written (a `file,` body: a message too long to write
        // out), which must then be a valid message already.
        let raw = match &e.body {
            Some(b) if b.kind != BodyKind::Json => Some(b.template.as_literal().ok_or_else(|| {
                at("a gRPC call's body is its message as JSON (the proto3 JSON mapping)".into())
            })?),
            _ => None,
        };
        let i = self.method(pool, call.as_str(), &at)?;
        if let Some(text) = raw {
            self.encode(i, text.as_bytes()).map_err(|why| at(format!("the message is {why}")))?;
        }
        Ok(i)
    }

    /// The method `call` names, added to the table if it is new.
    fn method(
        &mut self,
        pool: &prost_reflect::DescriptorPool,
        call: &str,
        at: &dyn Fn(String) -> String,
    ) -> Result<usize, String> {
        if let Some(i) = self.find_call(call) {
            return Ok(i);
        }
        let desc = grpc_call::find_method(pool, call, &self.proto).map_err(|err| {
            at(match err {
                CallError::NoService { service, known, .. } => {
                    format!("{} declares no service {service:?}; it declares: {known}", self.proto)
                }
                CallError::NoMethod { service, method, known, .. } => {
                    format!("service {service} has no method {method:?}; its methods: {known}")
                }
                _ => format!("{call:?} is not package.Service/Method"),
            })
        })?;
        if desc.is_client_streaming() || desc.is_server_streaming() {
            return Err(at(format!("{call} is a streaming method; only unary calls are supported")));
        }
        self.methods.push(Method { call: call.to_owned(), desc });
        Ok(self.methods.len() - 1)
    }

    fn find_call(&self, call: &str) -> Option<usize> {
        self.methods.iter().position(|m| m.call == call)
    }

    /// The method a request of one of the scenario's cases calls (all were found at load).
    pub fn method_of(&self, e: &Entry) -> Option<usize> {
        self.find_call(&call_of(e)?)
    }

    /// `json`, a request's body (empty: the empty message), encoded as method `m`'s input.
    pub fn encode(&self, m: usize, json: &[u8]) -> Result<Vec<u8>, String> {
        let input = self.methods[m].desc.input();
        let json: &[u8] = if json.trim_ascii().is_empty() { b"{}" } else { json };
        grpc_call::encode_json(&input, json).map_err(|e| match e {
            CallError::Data { message, why } => {
                format!("not a valid {message} in the proto3 JSON mapping: {why}")
            }
            other => other.to_string(),
        })
    }

    /// A reply to method `m` decoded into `out` as proto3 JSON, default values included.
    pub fn decode_json(&self, m: usize, reply: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        grpc_call::decode_to_json(&self.methods[m].desc.output(), reply, out)
    }

    /// Whether `e`'s checks read the answer's body (a reply is decoded to JSON only for them).
    pub fn reads_body(e: &Entry) -> bool {
        e.response.as_ref().is_some_and(|r| {
            let reads = Query::reads_body;
            r.captures.iter().any(|c| reads(&c.query)) || r.asserts.iter().any(|a| reads(&a.query))
        })
    }

    /// Whether `e`'s checks look at `grpc-status` themselves (then a non-zero status is theirs to
    /// judge, not an error of kind `grpc_N`).
    pub fn checks_grpc_status(e: &Entry) -> bool {
        let named = |q: &Query| matches!(q, Query::Header(h) if h.as_literal().is_none_or(|n| n.eq_ignore_ascii_case("grpc-status")));
        e.response.as_ref().is_some_and(|r| {
            r.captures.iter().any(|c| named(&c.query)) || r.asserts.iter().any(|a| named(&a.query))
        })
    }
}

/// `package.Service/Method` from a request written `POST {{base_url}}/package.Service/Method`.
fn call_of(e: &Entry) -> Option<String> {
    let src = e.url.source();
    let call = src.strip_prefix("{{base_url}}/").filter(|c| !c.contains("{{") && !c.is_empty())?;
    Some(call.to_owned())
}

#[cfg(test)]
mod tests;
