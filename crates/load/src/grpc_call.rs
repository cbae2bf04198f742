//! The generic gRPC path of `stackbench load`: `--proto FILE --call
//! pkg.Service/Method --data JSON|@FILE` calls any unary method, as ghz does.
//! The `.proto` is compiled when the run starts by protox (pure Rust: no
//! `protoc` needed; its directory and `--proto`'s siblings are the import
//! path, Google's well-known types are built in), the JSON is read into the
//! method's input message with the proto3 JSON mapping (prost-reflect), and
//! the message is encoded once: every call sends the same bytes.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

use bytes::Bytes;
use prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, MethodDescriptor};
use stackbench_hurl::{FileLimits, FileRoot, pos_of};

/// A unary call ready to send.
#[derive(Debug, Clone)]
pub struct Call {
    /// The HTTP/2 path, `/pkg.Service/Method`.
    pub path: String,
    /// The encoded input message (not yet gRPC-framed).
    pub message: Bytes,
}

/// Why a `--proto` call cannot be prepared; each message says what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    #[error("--proto {path}: {why}")]
    Compile { path: String, why: String },
    #[error("--call {call:?}: write it as package.Service/Method, e.g. sort.v1.SortService/BubbleSort")]
    Form { call: String },
    #[error("--call {call:?}: {path} declares no service {service:?}; it declares: {known}")]
    NoService { call: String, path: String, service: String, known: String },
    #[error("--call {call:?}: service {service} has no method {method:?}; its methods: {known}")]
    NoMethod { call: String, service: String, method: String, known: String },
    #[error("--call {call:?}: a streaming method; only unary calls are supported")]
    Streaming { call: String },
    #[error("--data: not a valid {message} in the proto3 JSON mapping: {why}")]
    Data { message: String, why: String },
    #[error("--data: cannot read {path}: {why}")]
    DataFile { path: String, why: String },
}

/// Compiles `proto`, finds `call` in it and encodes `data` (JSON, or `@FILE`;
/// `None` is the empty message `{}`) as its input.
pub fn prepare(proto: &Path, call: &str, data: Option<&str>) -> Result<Call, CallError> {
    let path = proto.display().to_string();
    let pool = compile(proto)?;
    let m = find_method(&pool, call, &path)?;
    if m.is_client_streaming() || m.is_server_streaming() {
        return Err(CallError::Streaming { call: call.to_owned() });
    }
    let json = match data {
        None => "{}".to_owned(),
        Some(d) => match d.strip_prefix('@') {
            Some(file) => std::fs::read_to_string(file)
                .map_err(|e| CallError::DataFile { path: file.to_owned(), why: e.to_string() })?,
            None => d.to_owned(),
        },
    };
    let message = encode_json(&m.input(), json.as_bytes())?;
    Ok(Call {
        path: format!("/{}/{}", m.parent_service().full_name(), m.name()),
        message: Bytes::from(message),
    })
}

/// The unary or streaming method `call` (`package.Service/Method`, a leading `/` allowed) of
/// `pool`, compiled from the file `path`.
pub fn find_method(pool: &DescriptorPool, call: &str, path: &str) -> Result<MethodDescriptor, CallError> {
    let (service, method) = call
        .trim_start_matches('/')
        .split_once('/')
        .filter(|(s, m)| !s.is_empty() && !m.is_empty() && !m.contains('/'))
        .ok_or_else(|| CallError::Form { call: call.to_owned() })?;
    let Some(svc) = pool.get_service_by_name(service) else {
        let known: Vec<String> = pool.services().map(|s| s.full_name().to_owned()).collect();
        let known = if known.is_empty() { "none".to_owned() } else { known.join(", ") };
        return Err(CallError::NoService {
            call: call.to_owned(),
            path: path.to_owned(),
            service: service.to_owned(),
            known,
        });
    };
    svc.methods().find(|m| m.name() == method).ok_or_else(|| {
        let known: Vec<String> = svc.methods().map(|m| m.name().to_owned()).collect();
        CallError::NoMethod {
            call: call.to_owned(),
            service: svc.full_name().to_owned(),
            method: method.to_owned(),
            known: known.join(", "),
        }
    })
}

/// `json`, a message `input` in the proto3 JSON mapping, encoded to protobuf.
pub fn encode_json(input: &MessageDescriptor, json: &[u8]) -> Result<Vec<u8>, CallError> {
    let data_error = |why: String| CallError::Data { message: input.full_name().to_owned(), why };
    let mut de = serde_json::Deserializer::from_slice(json);
    let message =
        DynamicMessage::deserialize(input.clone(), &mut de).map_err(|e| data_error(e.to_string()))?;
    de.end().map_err(|e| data_error(e.to_string()))?;
    Ok(message.encode_to_vec())
}

/// A message `output` read from protobuf `bytes` and written to `out` (cleared first) in the
/// proto3 JSON mapping, fields at their default values included (an empty list is `[]`, a
/// zero `0`), so that a check can find them. The error says why the bytes are not one.
pub fn decode_to_json(output: &MessageDescriptor, bytes: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let message = DynamicMessage::decode(output.clone(), bytes)
        .map_err(|e| format!("the reply is not a valid {}: {e}", output.full_name()))?;
    out.clear();
    let mut ser = serde_json::Serializer::new(out);
    let options = prost_reflect::SerializeOptions::new().skip_default_fields(false);
    message.serialize_with_options(&mut ser, &options).map_err(|e| e.to_string())
}

/// The descriptors of `proto` and its imports, resolved from its directory (`--proto`: any
/// file under it, at most the scenario files' default size).
pub fn compile(proto: &Path) -> Result<DescriptorPool, CallError> {
    let dir = proto.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let root = FileRoot::new(dir, &FileLimits::default())
        .map_err(|e| CallError::Compile { path: proto.display().to_string(), why: e.to_string() })?;
    compile_under(proto, &root)
}

/// The descriptors of `proto` and its imports, resolved from its directory, each file read
/// under `root` (a scenario's `[grpc] proto`: the scenario's root) within its size. An import
/// is a name below that directory, as protoc has it: a `..`, an absolute path or a link out of
/// the root is refused. A mistake in a file says where it is (`file:line:col`).
pub fn compile_under(proto: &Path, root: &FileRoot) -> Result<DescriptorPool, CallError> {
    let fail = |why: String| CallError::Compile { path: proto.display().to_string(), why };
    if !proto.is_file() {
        return Err(fail("no such file".to_owned()));
    }
    let dir = proto.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name =
        proto.file_name().and_then(|n| n.to_str()).ok_or_else(|| fail("not a file name".to_owned()))?;
    let texts = Texts::default();
    let mut resolver = protox::file::ChainFileResolver::new();
    resolver.add(Under { dir: dir.to_path_buf(), root: root.clone(), texts: Rc::clone(&texts) });
    resolver.add(protox::file::GoogleFileResolver::new());
    let mut compiler = protox::Compiler::with_file_resolver(resolver);
    compiler.include_imports(true);
    compiler.open_file(name).map_err(|e| fail(explain(&e, dir, &texts)))?;
    Ok(compiler.descriptor_pool())
}

/// The descriptors of a `.proto` given as its text (a built-in scenario's, compiled into the
/// binary, so that an installed `stackbench` needs no repository); `path` names it in
/// messages. Its imports can be Google's well-known types only.
pub fn compile_source(path: &Path, source: &str) -> Result<DescriptorPool, CallError> {
    let fail = |why: String| CallError::Compile { path: path.display().to_string(), why };
    let name = path.file_name().and_then(|n| n.to_str()).ok_or_else(|| fail("not a file name".to_owned()))?;
    let texts = Texts::default();
    texts.borrow_mut().insert(name.to_owned(), source.to_owned());
    let dir = path.parent().unwrap_or(Path::new(""));
    let file = protox::file::File::from_source(name, source).map_err(|e| fail(explain(&e, dir, &texts)))?;
    let mut resolver = protox::file::ChainFileResolver::new();
    resolver.add(Source(file));
    resolver.add(protox::file::GoogleFileResolver::new());
    let mut compiler = protox::Compiler::with_file_resolver(resolver);
    compiler.include_imports(true);
    compiler.open_file(name).map_err(|e| fail(explain(&e, dir, &texts)))?;
    Ok(compiler.descriptor_pool())
}

/// The text of each file read for one compilation, by its name: where a mistake's offset is.
type Texts = Rc<RefCell<HashMap<String, String>>>;

/// What protox says is wrong, with its help, placed at `file:line:col` (the file in `dir`)
/// when it says where.
fn explain(e: &protox::Error, dir: &Path, texts: &Texts) -> String {
    use miette::Diagnostic as _;
    let mut what = e.to_string();
    if let Some(help) = e.help() {
        let help = help.to_string();
        // protox-parse 0.10 words a refused import "invalid group name"; its help says what it is.
        if help.starts_with("imports may not") {
            what = format!("invalid import: {help}");
        } else {
            what = format!("{what} ({help})");
        }
    }
    let Some(file) = e.file() else { return what };
    let texts = texts.borrow();
    match e.labels().and_then(|mut l| l.next()).zip(texts.get(file)) {
        Some((label, text)) => {
            format!("{}:{}: {what}", dir.join(file).display(), pos_of(text, label.offset()))
        }
        None => what,
    }
}

/// `.proto` files found by their import names in `dir`, each read under `root`.
struct Under {
    dir: PathBuf,
    root: FileRoot,
    texts: Texts,
}

impl protox::file::FileResolver for Under {
    fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
        let climbs = Path::new(name).components().any(|c| !matches!(c, Component::Normal(_)));
        if climbs {
            return Err(protox::Error::new(format!(
                "import {name:?}: an import names a file below the importing .proto's directory (the import \
                 path), without `..` or a leading `/`"
            )));
        }
        let path = self.dir.join(name);
        if !path.exists() {
            return Err(protox::Error::file_not_found(name));
        }
        let text = self
            .root
            .read(&path)
            .map_err(|e| protox::Error::new(format!("cannot read {}: {e}", path.display())))?;
        self.texts.borrow_mut().insert(name.to_owned(), text.clone());
        protox::file::File::from_source(name, &text)
    }
}

/// One `.proto` held in memory, found by its name.
struct Source(protox::file::File);

impl protox::file::FileResolver for Source {
    fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
        if name == self.0.name() { Ok(self.0.clone()) } else { Err(protox::Error::file_not_found(name)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sort_proto() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../proto/sort/v1/sort.proto")
    }

    #[test]
    fn encodes_the_input_message_of_the_call() {
        let call =
            prepare(&sort_proto(), "sort.v1.SortService/BubbleSort", Some(r#"{"data":[3,1,2]}"#)).unwrap();
        assert_eq!(call.path, "/sort.v1.SortService/BubbleSort");
        // Field 1, packed (wire type 2), 3 bytes: 3, 1, 2.
        assert_eq!(&call.message[..], [0x0a, 3, 3, 1, 2]);
        let empty = prepare(&sort_proto(), "/sort.v1.SortService/BubbleSort", None).unwrap();
        assert!(empty.message.is_empty());
        let negative =
            prepare(&sort_proto(), "sort.v1.SortService/BubbleSort", Some(r#"{"data":[-1]}"#)).unwrap();
        assert_eq!(negative.message.len(), 2 + 10, "a negative int32 is a 10-byte varint");
    }

    #[test]
    fn mistakes_say_what_to_fix() {
        let err =
            |call: &str, data: Option<&str>| prepare(&sort_proto(), call, data).unwrap_err().to_string();
        assert!(err("SortService.BubbleSort", None).contains("package.Service/Method"));
        let e = err("sort.v1.Sorter/BubbleSort", None);
        assert!(e.contains("no service \"sort.v1.Sorter\"") && e.contains("sort.v1.SortService"), "{e}");
        let e = err("sort.v1.SortService/Sort", None);
        assert!(e.contains("no method \"Sort\"") && e.contains("BubbleSort"), "{e}");
        let e = err("sort.v1.SortService/BubbleSort", Some(r#"{"data":["x"]}"#));
        assert!(e.starts_with("--data: not a valid sort.v1.List"), "{e}");
        let e = err("sort.v1.SortService/BubbleSort", Some(r#"{"data":[1]} trailing"#));
        assert!(e.starts_with("--data:"), "{e}");
        let e = prepare(Path::new("/nonexistent/x.proto"), "a.B/C", None).unwrap_err().to_string();
        assert!(e.contains("/nonexistent/x.proto") && e.contains("no such file"), "{e}");
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path();
        std::fs::write(dir.join("bad.proto"), "syntax = \"proto3\"; message {").unwrap();
        let e = prepare(&dir.join("bad.proto"), "a.B/C", None).unwrap_err().to_string();
        assert!(e.starts_with("--proto ") && e.contains("bad.proto:1:28: "), "{e}");
    }

    /// Issue 45 #13: a `.proto`'s mistake said no `line:col`, and `import "../../x.proto"`
    /// said "invalid group name"; an import that climbs out is refused by name, and one that
    /// leads out of the root through a link is refused as a scenario's other files are.
    #[test]
    fn imports_stay_below_the_protos_directory() {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path();
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("x.proto"), "syntax = \"proto3\";\n").unwrap();
        let importing = |import: &str| format!("syntax = \"proto3\";\nimport \"{import}\";\npackage p;\n");
        std::fs::write(dir.join("sub/up.proto"), importing("../x.proto")).unwrap();
        let e = compile(&dir.join("sub/up.proto")).unwrap_err().to_string();
        assert!(
            e.contains("up.proto:2:8: invalid import: imports may not contain") && e.contains("'..'"),
            "{e}"
        );
        std::fs::write(dir.join("sub/abs.proto"), importing("/etc/x.proto")).unwrap();
        let e = compile(&dir.join("sub/abs.proto")).unwrap_err().to_string();
        assert!(e.contains("abs.proto:2:8: invalid import"), "{e}");
        std::os::unix::fs::symlink(dir.join("x.proto"), dir.join("sub/link.proto")).unwrap();
        std::fs::write(dir.join("sub/linked.proto"), importing("link.proto")).unwrap();
        let e = compile(&dir.join("sub/linked.proto")).unwrap_err().to_string();
        assert!(e.contains("outside") && e.contains("--file-root"), "{e}");
        std::fs::write(dir.join("sub/missing.proto"), importing("nope.proto")).unwrap();
        let e = compile(&dir.join("sub/missing.proto")).unwrap_err().to_string();
        assert!(e.contains("missing.proto:2:1: import 'nope.proto' not found"), "{e}");
    }

    /// A `.proto` given as text compiles as the same file read from disk does; its imports are
    /// Google's well-known types only, and a mistake names the path it was given.
    #[test]
    fn a_proto_given_as_text_compiles_as_from_disk() {
        let text = std::fs::read_to_string(sort_proto()).unwrap();
        let pool = compile_source(Path::new("embedded/sort.proto"), &text).unwrap();
        let m = find_method(&pool, "sort.v1.SortService/BubbleSort", "sort.proto").unwrap();
        let disk = compile(&sort_proto()).unwrap();
        let d = find_method(&disk, "sort.v1.SortService/BubbleSort", "sort.proto").unwrap();
        let json = br#"{"data":[3,-1,2]}"#;
        assert_eq!(encode_json(&m.input(), json).unwrap(), encode_json(&d.input(), json).unwrap());
        let wkt = "syntax = \"proto3\";\nimport \"google/protobuf/empty.proto\";\n\
                   service S { rpc Ping(google.protobuf.Empty) returns (google.protobuf.Empty); }\n";
        assert!(compile_source(Path::new("w.proto"), wkt).is_ok());
        let other = "syntax = \"proto3\";\nimport \"other.proto\";\n";
        let e = compile_source(Path::new("x/o.proto"), other).unwrap_err().to_string();
        assert!(e.starts_with("--proto x/o.proto: ") && e.contains("other.proto"), "{e}");
        let e = compile_source(Path::new("x/bad.proto"), "syntax = \"proto3\"; message {").unwrap_err();
        assert!(e.to_string().starts_with("--proto x/bad.proto: "), "{e}");
    }
}
