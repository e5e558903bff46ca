/** The Durable Object of one upload (named by the upload id). */
export function uploadState(env: Env, uploadId: string) {
  return env.UPLOAD_STATE.get(env.UPLOAD_STATE.idFromName(uploadId));
}
