// Direct exports: the answer is the file itself or a 303 to a presigned download (D8).
import { ApiError } from '../api/client';
import type { Redirect } from '../api/endpoints';
import { fileNameFromDisposition } from '../format';

export function saveBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  a.style.display = 'none';
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

function openUrl(url: string, fileName: string): void {
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  a.rel = 'noopener';
  document.body.appendChild(a);
  a.click();
  a.remove();
}

/** Downloads what `fetchFile` answers (a call of the client's `file`); returns the file name. */
export async function downloadFile(fetchFile: (redirect: Redirect) => Promise<Response>, fallbackName: string): Promise<string> {
  let res: Response;
  try {
    res = await fetchFile('follow');
  } catch (e) {
    // A cross-origin redirect the browser would not follow with our headers: ask for the
    // redirect itself and go to its Location.
    if (!(e instanceof ApiError) || e.status !== 0) throw e;
    const manual = await fetchFile('manual');
    const location = manual.headers.get('Location');
    if (location) {
      openUrl(location, fallbackName);
      return fallbackName;
    }
    throw new ApiError(0, 0, 'The file is ready but the browser could not download it. Try an export job instead.');
  }
  if (res.type === 'opaqueredirect') {
    throw new ApiError(0, 0, 'The file is ready but the browser could not download it. Try an export job instead.');
  }
  const name = fileNameFromDisposition(res.headers.get('Content-Disposition')) ?? fallbackName;
  saveBlob(await res.blob(), name);
  return name;
}
