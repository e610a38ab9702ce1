DROP TABLE fhir_export_files;
--bun:split
DROP TABLE fhir_exports;
