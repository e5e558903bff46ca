import { defineConfig } from "vitest/config";

// `npm run test:image`: the engine image built with podman and run against
// the local Worker (test/image/engine-image.test.ts). Not part of `npm test`:
// the build alone takes minutes (docs/deploying.md "Testing the image").
export default defineConfig({
  test: {
    name: "image",
    environment: "node",
    include: ["test/image/**/*.test.ts"],
    testTimeout: 600_000,
    // Building the base stand-in and the image, then the local stack.
    hookTimeout: 1_800_000,
  },
});
