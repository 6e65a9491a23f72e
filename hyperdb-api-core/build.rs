//! Generates the gRPC client from `proto/` when feature `grpc` is on.
//!
//! `protoc` comes from `protoc-bin-vendored` (a registry package carrying
//! the binaries), so a fresh machine needs no system protoc.

fn main() {
    #[cfg(feature = "grpc")]
    grpc();
}

#[cfg(feature = "grpc")]
fn grpc() {
    const PROTO: &str = "proto/salesforce/hyperdb/grpc/v1/hyper_service.proto";
    println!("cargo:rerun-if-changed={PROTO}");
    let protoc = match protoc_bin_vendored::protoc_bin_path() {
        Ok(path) => path,
        Err(e) => panic!("no vendored protoc for this platform: {e}"),
    };
    let include = match protoc_bin_vendored::include_path() {
        Ok(path) => path,
        Err(e) => panic!("no vendored protobuf includes: {e}"),
    };
    // prost-build finds protoc through this variable; a build script's
    // environment is its own.
    std::env::set_var("PROTOC", protoc);
    let result = tonic_prost_build::configure()
        .build_server(false)
        .build_transport(false)
        // Result parts as `Bytes`: handed on without a copy.
        .bytes(".")
        .compile_protos(
            &[PROTO.into()],
            &[std::path::PathBuf::from("proto"), include],
        );
    if let Err(e) = result {
        panic!("generating the gRPC client from {PROTO}: {e}");
    }
}
