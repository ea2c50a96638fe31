// What the build must never do (the test suite's fail point `build.no-build-environment`
// builds this entry to prove a test catches it): carry the build machine's environment into
// the snapshot, where every call would read it and anyone holding the component (it may be
// published) could.
export * from './bridge.js';
import processShim from './node/process.js';

Object.assign(processShim.env, __MCPBOX_BUILD_ENVIRONMENT__);
