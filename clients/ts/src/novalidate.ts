// A stand-in for buf/validate/validate.proto's generated code in a bundle
// that never reads a validation rule (the site's: clients/web/novalidate.mjs,
// decision 0470): a file of that name and package with nothing in it. Each
// generated file with rules names validate.proto as a dependency of its
// descriptor, which is all it needs of it; the rules stay in that
// descriptor's options as unknown fields, and the server checks them.
import { create, createFileRegistry } from "@bufbuild/protobuf";
import type { GenFile } from "@bufbuild/protobuf/codegenv2";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";

const name = "buf/validate/validate.proto";

export const file_buf_validate_validate: GenFile = createFileRegistry(
  create(FileDescriptorProtoSchema, { name, package: "buf.validate", syntax: "proto2" }),
  () => undefined,
).getFile(name)!;
