//! Facilities' certificates for the tests: a CA of their own (rcgen), the client certificates it
//! issues, and PKCS#12 files holding a key and its chain, written with p12-keystore (the crate
//! the service reads them with).

use p12_keystore::{Certificate, KeyStore, KeyStoreEntry, PrivateKey, PrivateKeyChain};
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};

/// Passphrase of the files the tests write.
pub const PASSPHRASE: &str = "facility passphrase 1";

/// A certificate authority of the test's own.
pub struct TestCa {
    issuer: Issuer<'static, KeyPair>,
    /// Its self-signed certificate, DER.
    pub der: Vec<u8>,
}

/// A client certificate with its key.
pub struct Issued {
    /// The certificate, DER.
    pub der: Vec<u8>,
    /// The private key, PKCS#8 DER.
    pub key_der: Vec<u8>,
}

impl TestCa {
    /// A CA named `name`.
    pub fn new(name: &str) -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name = distinguished_name(name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().unwrap();
        let der = params.self_signed(&key).unwrap().der().to_vec();
        TestCa {
            issuer: Issuer::new(params, key),
            der,
        }
    }

    /// A client certificate for `common_name`, valid until the first of January of
    /// `until_year`.
    pub fn issue(&self, common_name: &str, until_year: i32) -> Issued {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name = distinguished_name(common_name);
        params.not_after = rcgen::date_time_ymd(until_year, 1, 1);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        self.sign(params)
    }

    /// A server certificate for `host`.
    pub fn server(&self, host: &str) -> Issued {
        let mut params = CertificateParams::new(vec![host.to_owned()]).unwrap();
        params.distinguished_name = distinguished_name(host);
        params.not_after = rcgen::date_time_ymd(2045, 1, 1);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        self.sign(params)
    }

    fn sign(&self, mut params: CertificateParams) -> Issued {
        params.not_before = rcgen::date_time_ymd(2019, 1, 1);
        let key = KeyPair::generate().unwrap();
        let der = params.signed_by(&key, &self.issuer).unwrap().der().to_vec();
        Issued {
            der,
            key_der: key.serialize_der(),
        }
    }
}

fn distinguished_name(common_name: &str) -> DistinguishedName {
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    name.push(DnType::OrganizationName, "Klinikum Test");
    name
}

/// A PKCS#12 file with `key_der` and the chain `chain` (the client's certificate first),
/// encrypted with `passphrase`.
pub fn pkcs12_of(key_der: &[u8], chain: &[&[u8]], passphrase: &str) -> Vec<u8> {
    let mut store = KeyStore::new();
    store.add_entry("facility", key_entry(key_der, chain));
    store.writer(passphrase).write().unwrap()
}

/// The keystore entry of a key and its chain.
pub fn key_entry(key_der: &[u8], chain: &[&[u8]]) -> KeyStoreEntry {
    let certs: Vec<Certificate> = chain
        .iter()
        .map(|der| Certificate::from_der(der).unwrap())
        .collect();
    KeyStoreEntry::PrivateKeyChain(PrivateKeyChain::new(
        chain[0].to_vec(),
        PrivateKey::from_der(key_der).unwrap(),
        certs,
    ))
}

/// The PKCS#12 file of `issued` with its CA, encrypted with [`PASSPHRASE`].
pub fn pkcs12(issued: &Issued, ca: &TestCa) -> Vec<u8> {
    pkcs12_of(&issued.key_der, &[&issued.der, &ca.der], PASSPHRASE)
}

/// SHA-256 of `der`, lowercase hex.
pub fn sha256_hex(der: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, der)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
