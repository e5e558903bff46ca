import { lookup } from "node:dns/promises";
import { nonPublicReason } from "./ip-address.ts";

/** One place a download is about to connect to. */
export interface ConnectTarget {
  /** The URL's host name as written (after WHATWG normalisation). */
  hostname: string;
  /** The resolved address that will actually be dialled. */
  address: string;
  port: number;
}

/** Returns why the target is refused, or null to allow it. */
export type AddressPolicy = (target: ConnectTarget) => string | null;

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (injectable for tests). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** Production rule: public unicast addresses only. */
export const publicOnlyPolicy: AddressPolicy = (target) => {
  const reason = nonPublicReason(target.address);
  if (!reason) return null;
  return target.hostname === target.address
    ? `${target.address} is a ${reason} address`
    : `${target.hostname} resolves to a ${reason} address (${target.address})`;
};

/** limits.allow_private_hosts (local development and tests): any address. */
export const anyAddressPolicy: AddressPolicy = () => null;

export function policyFor(allowPrivateHosts: boolean): AddressPolicy {
  return allowPrivateHosts ? anyAddressPolicy : publicOnlyPolicy;
}
