//! `make token TENANT=acme`: prints a development token valid for 24 hours.

fn main() {
    let tenant = std::env::args().nth(1).unwrap_or_else(|| "acme".into());
    let lookup = |name: &str| match name {
        "AUTH_MODE" => Some("local".to_owned()),
        "OUTBOUND_DEV_STACK" => Some("true".to_owned()),
        other => std::env::var(other).ok(),
    };
    let auth = outbound_auth::AuthConfig::from_lookup(&lookup).expect("valid token settings");
    let outbound_auth::AuthConfig::Local(jwt) = auth else {
        unreachable!("AUTH_MODE is local")
    };
    println!("{}", jwt.issue(&tenant, 24 * 3600));
}
