import { generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import {
  CreateAliasCommand, CreateKeyCommand, DeleteAliasCommand, GetPublicKeyCommand, KMSServiceException, PutKeyPolicyCommand, ScheduleKeyDeletionCommand,
  SignCommand, UpdateAliasCommand,
} from '@aws-sdk/client-kms';
import type { KmsSend } from '#shared/keys/kms-signer';

/** HTTP status and fault KMS answers each error name with (AWS KMS API reference, "Errors"). */
const ERROR_SHAPES: Record<string, { status: number; fault: 'client' | 'server'; message: string }> = {
  ThrottlingException: { status: 400, fault: 'client', message: 'Rate exceeded' },
  KMSInternalException: { status: 500, fault: 'server', message: 'An internal error occurred.' },
  AccessDeniedException: { status: 400, fault: 'client', message: 'User is not authorized to perform: kms:Sign' },
  DisabledException: { status: 400, fault: 'client', message: 'The key is disabled.' },
  NotFoundException: { status: 400, fault: 'client', message: 'Not found.' },
  AlreadyExistsException: { status: 400, fault: 'client', message: 'Already exists.' },
  KMSInvalidStateException: { status: 400, fault: 'client', message: 'The key is pending deletion.' },
};

const ACCOUNT_REGION = 'eu-west-1:111122223333';

export interface FakeKmsKey {
  arn: string;
  keyId: string;
  state: 'Enabled' | 'PendingDeletion';
  /** The key policy CreateKey or the last PutKeyPolicy gave it (undefined: KMS's default key policy). */
  policy?: string;
  /** CreateKey's Tags, as a map. */
  tags: Record<string, string>;
  description?: string;
  /** When CreateKey made it (epoch ms of the clock); undefined for the first key. */
  createdAt?: number;
  /** The aliases that point at it. */
  aliases: string[];
}

export interface FakeKmsOptions {
  /**
   * For this long after CreateKey, kms:GetPublicKey and kms:Sign of the new key are refused with
   * AccessDeniedException, as KMS may: "It might take up to five minutes for tag and alias changes to
   * affect KMS key authorization" (AWS KMS Developer Guide, "Use tags to control access to KMS keys").
   */
  freshKeyRefusalSeconds?: number;
}

/**
 * A stand-in for KMS (no local engine exists) that does the real cryptography: RSA-2048 key pairs
 * held here, RSASSA_PKCS1_V1_5_SHA_256 signatures over the raw message, SPKI public keys. A first
 * key exists from the start and answers any key id no CreateKey made (so a test can name it as it
 * likes); CreateKey makes more (keeping their policy, tags and description), PutKeyPolicy replaces a
 * key's policy, ScheduleKeyDeletion
 * puts one in PendingDeletion (then every use is refused, as KMS refuses it), and the alias
 * operations keep `alias name → key`. `failSign` makes the next kms:Sign calls fail the way the SDK
 * reports a service error after its retries: a KMSServiceException with that name, `$fault` and
 * `$metadata`. The clock is the process's (`Date.now`), so `vi.setSystemTime` moves it.
 */
export function createFakeKms(options: FakeKmsOptions = {}) {
  const first = newKey(`arn:aws:kms:${ACCOUNT_REGION}:key/${randomUUID()}`);
  const keys = new Map<string, FakeKmsKey & { privateKey: KeyObject; publicKey: KeyObject }>();
  const aliases = new Map<string, string>();
  const calls: string[] = [];
  let failures: { name: string; left: number } | undefined;
  let refusalSeconds = options.freshKeyRefusalSeconds ?? 0;

  function newKey(arn: string, extra: Partial<FakeKmsKey> = {}) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    return { arn, keyId: arn.split('/').pop()!, state: 'Enabled' as const, tags: {}, aliases: [], privateKey, publicKey, ...extra };
  }
  /** The key a KeyId names (id, ARN, alias name): a created one, else the first key. */
  const keyOf = (keyId: unknown) => {
    const id = String(keyId);
    const arn = aliases.get(id) ?? (id.startsWith('arn:') ? id : `arn:aws:kms:${ACCOUNT_REGION}:key/${id}`);
    return keys.get(arn) ?? first;
  };
  /** Refuses a use of a key that is pending deletion, or (AccessDenied) still too fresh. */
  const usable = (key: ReturnType<typeof newKey>, action: string) => {
    if (key.state !== 'Enabled') throw serviceError('KMSInvalidStateException', `${key.arn} is pending deletion.`);
    if (key.createdAt !== undefined && Date.now() < key.createdAt + refusalSeconds * 1000) {
      throw serviceError('AccessDeniedException', `User is not authorized to perform: ${action} on resource: ${key.arn}`);
    }
  };

  const kms: KmsSend = {
    send: (async (command: unknown) => {
      if (command instanceof SignCommand) {
        calls.push('Sign');
        if (failures && failures.left > 0) {
          failures.left--;
          throw serviceError(failures.name);
        }
        const key = keyOf(command.input.KeyId);
        usable(key, 'kms:Sign');
        const { Message, MessageType, SigningAlgorithm } = command.input;
        if (MessageType !== 'RAW' || SigningAlgorithm !== 'RSASSA_PKCS1_V1_5_SHA_256' || !Message) {
          throw new Error('ValidationException');
        }
        return { Signature: new Uint8Array(sign('sha256', Message, key.privateKey)) };
      }
      if (command instanceof GetPublicKeyCommand) {
        calls.push('GetPublicKey');
        const key = keyOf(command.input.KeyId);
        usable(key, 'kms:GetPublicKey');
        return { KeyId: key.arn, PublicKey: new Uint8Array(key.publicKey.export({ format: 'der', type: 'spki' })) };
      }
      if (command instanceof CreateKeyCommand) {
        calls.push('CreateKey');
        const { KeySpec, KeyUsage, Policy, Tags, Description } = command.input;
        if (KeySpec !== 'RSA_2048' || KeyUsage !== 'SIGN_VERIFY') throw serviceError('ValidationException', 'Only RSA_2048 SIGN_VERIFY keys are emulated');
        const key = newKey(`arn:aws:kms:${ACCOUNT_REGION}:key/${randomUUID()}`, {
          createdAt: Date.now(), policy: Policy, description: Description,
          tags: Object.fromEntries((Tags ?? []).map((t) => [t.TagKey!, t.TagValue!])),
        });
        keys.set(key.arn, key);
        return { KeyMetadata: { KeyId: key.keyId, Arn: key.arn, KeyState: 'Enabled', KeySpec, KeyUsage } };
      }
      if (command instanceof ScheduleKeyDeletionCommand) {
        calls.push('ScheduleKeyDeletion');
        const key = keys.get(keyOf(command.input.KeyId).arn);
        if (!key) throw serviceError('NotFoundException');
        if (key.state !== 'Enabled') throw serviceError('KMSInvalidStateException', `${key.arn} is pending deletion.`);
        key.state = 'PendingDeletion';
        return { KeyId: key.arn, KeyState: 'PendingDeletion', PendingWindowInDays: command.input.PendingWindowInDays };
      }
      if (command instanceof PutKeyPolicyCommand) {
        calls.push('PutKeyPolicy');
        const key = keys.get(keyOf(command.input.KeyId).arn);
        if (!key) throw serviceError('NotFoundException');
        if (key.state !== 'Enabled') throw serviceError('KMSInvalidStateException', `${key.arn} is pending deletion.`);
        key.policy = command.input.Policy;
        return {};
      }
      if (command instanceof CreateAliasCommand || command instanceof UpdateAliasCommand) {
        const update = command instanceof UpdateAliasCommand;
        calls.push(update ? 'UpdateAlias' : 'CreateAlias');
        const name = String(command.input.AliasName);
        if (update !== aliases.has(name)) throw serviceError(update ? 'NotFoundException' : 'AlreadyExistsException', name);
        aliases.set(name, keyOf(command.input.TargetKeyId).arn);
        return {};
      }
      if (command instanceof DeleteAliasCommand) {
        calls.push('DeleteAlias');
        const name = String(command.input.AliasName);
        if (!aliases.delete(name)) throw serviceError('NotFoundException', `Alias ${name} does not exist`);
        return {};
      }
      throw new Error(`unexpected command ${String(command)}`);
    }) as KmsSend['send'],
  };
  keys.set(first.arn, first);
  return {
    kms,
    calls,
    /** The public key of the first key. */
    publicKey: first.publicKey,
    /** The ARN of the first key (the stack's own key, in a rotation test). */
    firstKeyArn: first.arn,
    /** Every key, the first one first, with its state, policy, tags and aliases. */
    keys: (): FakeKmsKey[] => [...keys.values()].map(({ privateKey: _, publicKey: __, ...key }) => ({
      ...key, tags: { ...key.tags }, aliases: [...aliases].filter(([, arn]) => arn === key.arn).map(([name]) => name),
    })),
    /** The next `times` kms:Sign calls fail with the KMS error `name` (default: throttling). */
    failSign(times: number, name: keyof typeof ERROR_SHAPES = 'ThrottlingException') {
      failures = { name, left: times };
    },
    /** From now on, a created key is refused for `seconds` after its creation (see FakeKmsOptions); 0 lifts every refusal. */
    refuseFreshKeys(seconds: number) {
      refusalSeconds = seconds;
    },
  };
}

function serviceError(name: string, message?: string): KMSServiceException {
  const shape = ERROR_SHAPES[name] ?? { status: 400, fault: 'client' as const, message: name };
  return new KMSServiceException({
    name,
    $fault: shape.fault,
    message: message ?? shape.message,
    $metadata: { httpStatusCode: shape.status, requestId: randomUUID(), attempts: 3, totalRetryDelay: 350 },
  });
}
