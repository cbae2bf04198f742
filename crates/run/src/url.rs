//! The one split of a contestant's URL into its base (`scheme://authority`,
//! where requests connect) and its path (where the load and verification go,
//! `""` for the root), used by plans, the lifecycle and `stackbench verify`.

/// `http://host:port/db/x?q` → `("http://host:port", "/db/x?q")`; a root
/// path (`/` or none) is `""`. `None` for a string without `scheme://`.
pub fn split(url: &str) -> Option<(String, String)> {
    let (scheme, rest) = url.trim().split_once("://")?;
    let (authority, path) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
    let path = if path == "/" { "" } else { path.trim_end_matches('/') };
    Some((format!("{scheme}://{authority}"), path.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn bases_and_paths() {
        let s = split;
        assert_eq!(s("http://h:1/db/x"), Some(("http://h:1".into(), "/db/x".into())));
        assert_eq!(s("http://h:1/db/x/"), Some(("http://h:1".into(), "/db/x".into())));
        assert_eq!(s("http://h:1/"), Some(("http://h:1".into(), String::new())));
        assert_eq!(s("http://h:1"), Some(("http://h:1".into(), String::new())));
        assert_eq!(s("http://[::1]:8080/a?b=1"), Some(("http://[::1]:8080".into(), "/a?b=1".into())));
        assert_eq!(s("h:1/x"), None);
    }
}
