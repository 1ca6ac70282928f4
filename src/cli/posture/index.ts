/** `govctl posture`. */
export { createPostureCommand, run, type PostureOptions } from './posture.js';
