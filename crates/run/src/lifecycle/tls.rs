//! TLS in a plan: a started contestant with `tls = true` serves HTTPS with a certificate
//! stackbench makes for the run ([`make`]: ECDSA P-256, self-signed, for `localhost`,
//! `127.0.0.1` and `::1`; one certificate and key type for every stack, so a comparison
//! measures the stacks, not their keys), given to its command as `{tls_cert}` and
//! `{tls_key}`; stackbench then probes, verifies and loads it at `https://127.0.0.1:PORT`,
//! trusting that certificate. An external `https://` contestant is reached with the TLS
//! flags of its load profile (`cacert`, `insecure`, …), its probes as its load.

use std::path::{Path, PathBuf};

use crate::client::Reach;
use crate::plan::{Contestant, Launch};

/// Where a contestant's certificate and key are, in its scratch directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Made {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// The files of the certificate made for the contestant whose scratch directory is `dir`.
pub fn paths(dir: &Path) -> Made {
    let tls = dir.join("tls");
    Made { cert: tls.join("cert.pem"), key: tls.join("key.pem") }
}

/// Makes the certificate and key (PEM) at [`paths`]`(dir)`; the key readable by its owner only.
pub fn make(dir: &Path) -> Result<Made, String> {
    let made = paths(dir);
    let fail = |e: &dyn std::fmt::Display| format!("cannot make the contestant's TLS certificate: {e}");
    let names = vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "::1".to_owned()];
    let mut params = rcgen::CertificateParams::new(names).map_err(|e| fail(&e))?;
    params.distinguished_name.push(rcgen::DnType::CommonName, "stackbench contestant");
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).map_err(|e| fail(&e))?;
    let cert = params.self_signed(&key).map_err(|e| fail(&e))?;
    let tls = made.cert.parent().expect("a file in a directory");
    std::fs::create_dir_all(tls).map_err(|e| fail(&e))?;
    std::fs::write(&made.cert, cert.pem()).map_err(|e| fail(&e))?;
    write_private(&made.key, key.serialize_pem().as_bytes()).map_err(|e| fail(&e))?;
    Ok(made)
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let _ = std::fs::remove_file(path);
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    f.write_all(bytes)
}

/// How `c` is spoken to: `https` with `tls = true` or an `https://` URL, else `http`.
pub fn scheme(c: &Contestant) -> &'static str {
    c.launch.scheme()
}

/// Whether stackbench makes a certificate for `c`.
pub fn serves_tls(c: &Contestant) -> bool {
    matches!(c.launch, Launch::Command { tls: true, .. })
}

/// How the probes reach `c`: its load profile's TLS flags and routes; for a contestant
/// with `tls = true`, trusting the certificate made for it (`made`) unless the profile
/// says how to check certificates itself.
pub fn reach(c: &Contestant, made: Option<&Made>) -> Reach {
    let options = crate::plan::profile::options(&c.scenario, &c.profile).unwrap_or_default();
    let mut tls = options.tls_flags();
    if let Some(m) = made.filter(|_| tls.cacert.is_none() && !tls.insecure) {
        tls.cacert = Some(m.cert.clone());
    }
    let route = stackbench_load::Route::new(&options.resolve, &options.connect_to).unwrap_or_default();
    Reach { tls, route }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_certificate_is_p256_for_the_loopback_names() {
        use std::os::unix::fs::PermissionsExt as _;
        let scratch = tempfile::Builder::new().prefix("sb-made-tls-").tempdir().unwrap();
        let dir = scratch.path().join("tls");
        let made = make(&dir).unwrap();
        let pem = std::fs::read_to_string(&made.cert).unwrap();
        assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"), "{pem}");
        let key = std::fs::read_to_string(&made.key).unwrap();
        assert!(key.contains("PRIVATE KEY"), "{key}");
        assert_eq!(std::fs::metadata(&made.key).unwrap().permissions().mode() & 0o777, 0o600);
        // Made again (a plan run after another), it is replaced.
        assert_eq!(make(&dir).unwrap(), made);
    }
}
