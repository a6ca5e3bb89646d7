/**
 * protobufjs makes a message type's five functions (encode, decode, verify, fromObject, toObject)
 * together, by generating and compiling their code, the first time any of them is called. A
 * client mostly only encodes requests and decodes responses: here encode and decode are made
 * alone, on their first call; the other three still make all five, as before. The functions are
 * the ones protobufjs would make, so messages read and write exactly as they did.
 */
import type * as Protobuf from 'protobufjs';

const DONE = Symbol.for('harness.lean-proto.codecs');

type TypeInternals = Protobuf.Type & {
  _edition?: string;
  root: Protobuf.Root & { _needsRecursiveFeatureResolution?: boolean; _edition?: string; _resolveFeaturesRecursive(edition: string): void };
};
type Generated = (scope: Record<string, unknown>) => (...args: unknown[]) => unknown;
interface Light {
  encoder(t: Protobuf.Type): Generated;
  decoder(t: Protobuf.Type): Generated;
}

/** Makes encode and decode of every type of this protobufjs generated on their own first call. */
export function lazyCodecs(pb: typeof Protobuf): void {
  const proto = pb.Type.prototype as unknown as Record<symbol | string, unknown>;
  if (proto[DONE]) return;
  proto[DONE] = true;
  const light = pb as unknown as Light;
  // What Type#setup does before generating: settle the features (field presence) of the root.
  const fieldTypes = (t: TypeInternals) => {
    const root = t.root;
    if (root && root._needsRecursiveFeatureResolution) {
      const edition = root._edition || t._edition;
      if (edition) root._resolveFeaturesRecursive(edition);
    }
    return t.fieldsArray.map((f) => f.resolve().resolvedType);
  };
  proto.encode = function encode_setup(this: TypeInternals, ...args: unknown[]) {
    const encode = light.encoder(this)({ Writer: pb.Writer, types: fieldTypes(this), util: pb.util });
    this.encode = encode as Protobuf.Type['encode'];
    return encode.apply(this, args);
  };
  proto.decode = function decode_setup(this: TypeInternals, ...args: unknown[]) {
    const types = fieldTypes(this);
    const decode = light.decoder(this)({ Reader: pb.Reader, types, util: pb.util, C: this.ctor });
    this.decode = decode as Protobuf.Type['decode'];
    return decode.apply(this, args);
  };
}
