/** File of a trained NGC model directory that records how it was trained (`trainRun`). */
export const NGC_RUN_FILE = 'lethe-ngc.json';
