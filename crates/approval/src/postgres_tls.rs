//! TLS to PostgreSQL, as libpq's `sslmode` and `sslrootcert` say, through
//! rustls: the PostgreSQL client reads neither `verify-ca` nor `verify-full`
//! nor `sslrootcert`, so the URL is read here first, what the client does
//! not know is taken out, and the connections it makes go through
//! [`MakeTls`].
//!
//! | `sslmode` | TLS | the server's certificate |
//! |---|---|---|
//! | `disable` | never | - |
//! | `prefer` (the default) | when the server offers it | not checked (checked as `verify-ca` with `sslrootcert`) |
//! | `require` | always | as `prefer` |
//! | `verify-ca` | always | signed by `sslrootcert`'s authorities |
//! | `verify-full` | always | signed by them, and names the host connected to |

use std::error::Error;
use std::future::Future;
use std::io;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use postgres::Socket;

use crate::postgres_url::{Split, split};
use postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect, TlsStream};
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// What `sslmode` asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SslMode {
    /// No TLS.
    Disable,
    /// TLS when the server offers it.
    Prefer,
    /// TLS always.
    Require,
    /// TLS with a certificate signed by `sslrootcert`'s authorities.
    VerifyCa,
    /// As `VerifyCa`, and the certificate names the host.
    VerifyFull,
}

impl SslMode {
    /// The mode as `sslmode` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// A PostgreSQL URL read: the client's settings, and how to speak TLS.
pub struct Connection {
    /// The client's settings (with `sslmode` as the client knows it).
    pub config: postgres::Config,
    /// The connector every connection goes through.
    pub tls: MakeTls,
    /// The mode the URL asked for.
    pub mode: SslMode,
}

/// Reads `url` (a `postgres://` URL or a `key=value` string): refuses a mode
/// it does not know, a verifying mode without `sslrootcert`, and a root
/// certificate file that cannot be read. Errors name the setting, never the
/// URL (it may hold a password).
pub fn connection(url: &str) -> Result<Connection, String> {
    let Split {
        rest,
        mode,
        root_cert,
    } = split(url)?;
    let mut config: postgres::Config = rest.parse().map_err(|e| format!("{e}"))?;
    let mode = match mode.as_deref() {
        None | Some("prefer") => SslMode::Prefer,
        Some("disable") => SslMode::Disable,
        Some("require") => SslMode::Require,
        Some("verify-ca") => SslMode::VerifyCa,
        Some("verify-full") => SslMode::VerifyFull,
        Some(other) => {
            return Err(format!(
                "sslmode={other} is not one Warden speaks: use disable, prefer, require, verify-ca \
                 or verify-full"
            ));
        }
    };
    config.ssl_mode(match mode {
        SslMode::Disable => postgres::config::SslMode::Disable,
        SslMode::Prefer => postgres::config::SslMode::Prefer,
        _ => postgres::config::SslMode::Require,
    });
    let verify = match (mode, &root_cert) {
        (SslMode::VerifyCa | SslMode::VerifyFull, None) => {
            return Err(format!(
                "sslmode={} checks the server's certificate against sslrootcert, which is not \
                 set: add sslrootcert=PATH (the authorities' certificates, PEM)",
                mode.as_str()
            ));
        }
        (SslMode::Disable, _) => None,
        (SslMode::VerifyFull, Some(path)) => Some((roots(path)?, true)),
        (_, Some(path)) => Some((roots(path)?, false)),
        (_, None) => None,
    };
    let tls = MakeTls {
        config: (mode != SslMode::Disable).then(|| Arc::new(client_config(verify))),
    };
    Ok(Connection { config, tls, mode })
}

/// The authorities in the PEM file at `path`.
fn roots(path: &Path) -> Result<RootCertStore, String> {
    let shown = path.display();
    let mut roots = RootCertStore::empty();
    let certificates =
        CertificateDer::pem_file_iter(path).map_err(|e| format!("sslrootcert {shown}: {e}"))?;
    for certificate in certificates {
        let certificate = certificate.map_err(|e| format!("sslrootcert {shown}: {e}"))?;
        roots
            .add(certificate)
            .map_err(|e| format!("sslrootcert {shown}: {e}"))?;
    }
    if roots.is_empty() {
        return Err(format!("sslrootcert {shown} holds no certificate"));
    }
    Ok(roots)
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A client configuration: checking the server against `verify`'s
/// authorities (and its name, when the flag says so), or not at all.
fn client_config(verify: Option<(RootCertStore, bool)>) -> ClientConfig {
    let provider = provider();
    let verifier: Arc<dyn ServerCertVerifier> = match verify {
        Some((roots, full)) => {
            let webpki =
                WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                    .build()
                    .expect("a root store with at least one certificate");
            Arc::new(Authorities { webpki, full })
        }
        None => Arc::new(Unchecked {
            provider: provider.clone(),
        }),
    };
    ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring's provider speaks TLS 1.2 and 1.3")
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth()
}

/// `verify-ca` and `verify-full`: the certificate chains to an authority;
/// with `full`, it also names the host.
#[derive(Debug)]
struct Authorities {
    webpki: Arc<WebPkiServerVerifier>,
    full: bool,
}

impl ServerCertVerifier for Authorities {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.webpki.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            // The chain was checked before the name: only the name failed.
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.full => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// `prefer` and `require` without `sslrootcert`: encrypted, the server not
/// authenticated (libpq's meaning); the handshake's signatures are still
/// checked.
#[derive(Debug)]
struct Unchecked {
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// Makes the TLS connector of each connection (`None`: `sslmode=disable`,
/// where the client never asks for one).
#[derive(Clone)]
pub struct MakeTls {
    config: Option<Arc<ClientConfig>>,
}

impl MakeTlsConnect<Socket> for MakeTls {
    type Stream = Tls;
    type TlsConnect = Connect;
    type Error = io::Error;

    fn make_tls_connect(&mut self, domain: &str) -> Result<Connect, io::Error> {
        // Asked of every connection, TLS or not (a Unix socket's has no
        // name): a name TLS cannot use fails only a handshake.
        Ok(Connect {
            config: self.config.clone(),
            name: ServerName::try_from(domain.to_string()).map_err(|e| format!("'{domain}': {e}")),
        })
    }
}

/// One connection's TLS handshake.
pub struct Connect {
    config: Option<Arc<ClientConfig>>,
    name: Result<ServerName<'static>, String>,
}

type Handshake = Pin<Box<dyn Future<Output = Result<Tls, Box<dyn Error + Send + Sync>>> + Send>>;

impl TlsConnect<Socket> for Connect {
    type Stream = Tls;
    type Error = Box<dyn Error + Send + Sync>;
    type Future = Handshake;

    fn connect(self, stream: Socket) -> Handshake {
        Box::pin(async move {
            let config = self
                .config
                .ok_or("sslmode=disable, yet the server was asked for TLS")?;
            let name = self
                .name
                .map_err(|e| format!("TLS needs the server's host name, and {e} is not one"))?;
            let stream = tokio_rustls::TlsConnector::from(config)
                .connect(name, stream)
                .await?;
            Ok(Tls(Box::new(stream)))
        })
    }
}

/// A connection's TLS stream.
pub struct Tls(Box<tokio_rustls::client::TlsStream<Socket>>);

impl TlsStream for Tls {
    fn channel_binding(&self) -> ChannelBinding {
        // SCRAM without channel binding, as libpq's default `prefer`.
        ChannelBinding::none()
    }
}

impl AsyncRead for Tls {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.get_mut().0).poll_read(cx, buf)
    }
}

impl AsyncWrite for Tls {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut *self.get_mut().0).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.get_mut().0).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.get_mut().0).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mode_warden_does_not_speak_is_refused_naming_the_ones_it_does() {
        let err = connection("postgres://db/w?sslmode=allow").err().unwrap();
        assert!(
            err.contains("sslmode=allow") && err.contains("verify-full"),
            "{err}"
        );
    }

    #[test]
    fn a_verifying_mode_without_sslrootcert_is_refused() {
        let err = connection("postgres://db/w?sslmode=verify-full")
            .err()
            .unwrap();
        assert!(err.contains("sslrootcert"), "{err}");
    }

    #[test]
    fn a_root_certificate_file_that_cannot_be_read_is_refused_naming_it() {
        let err = connection("postgres://db/w?sslmode=verify-ca&sslrootcert=/nowhere/ca.pem")
            .err()
            .unwrap();
        assert!(err.contains("sslrootcert /nowhere/ca.pem"), "{err}");
    }

    #[test]
    fn a_quoted_value_keeps_its_escapes_through_the_rewrite() {
        let split = split(r"host=db password='a\'b\\c' sslmode=disable").unwrap();
        let config: postgres::Config = split.rest.parse().unwrap();
        assert_eq!(config.get_password(), Some(&b"a'b\\c"[..]));
    }
}
